package main

import (
	"os"
	"testing"

	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
)

// TestMain puts the test codec's key in the environment (testcodec.Key),
// so that every client and process of the package's tests (the worker and
// coordinator processes inherit it) runs under the encryption codec, as a
// deployment that encrypts its payloads does.
func TestMain(m *testing.M) {
	testcodec.Key()
	os.Exit(m.Run())
}
