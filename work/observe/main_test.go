package observe_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The example starts an engine: nothing of it may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
