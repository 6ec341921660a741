package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain puts a content key in the environment (sealContent), so that
// every process of the package's tests seals content with it, as a
// deployment that keeps content out of Restate in the clear does; each
// cluster's server signs its requests and its service processes check
// them (cluster.start).
func TestMain(m *testing.M) {
	if err := sealContent(); err != nil {
		fmt.Fprintln(os.Stderr, "awrestate tests:", err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}
