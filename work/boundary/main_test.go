package boundary_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start engines: nothing of them may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
