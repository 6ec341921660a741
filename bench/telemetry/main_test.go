// Package telemetrybench holds the telemetry package's Goal benchmark and
// the tests that compare it with the OpenTelemetry SDK floor.
package telemetrybench

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
