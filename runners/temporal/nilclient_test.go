package temporal_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// An Engine made with no client is unusable (driver.Config.Unusable,
// whose every method the driver's TestUnusablePortable holds): it
// answers work.ErrUnavailable and never panics; NewWorker refuses a nil
// client.
func TestNilClient(t *testing.T) {
	eng := temporal.New(nil)
	o := work.NewOwner("o")
	if _, err := eng.Status(context.Background(), o, driver.NewID()); !errors.Is(err, work.ErrUnavailable) {
		t.Errorf("Status = %v, want work.ErrUnavailable", err)
	}
	if _, err := eng.Snapshot(context.Background()); !errors.Is(err, work.ErrUnavailable) {
		t.Errorf("Snapshot = %v, want work.ErrUnavailable", err)
	}
	if err := eng.Close(context.Background()); err != nil {
		t.Errorf("Close = %v", err)
	}
	if _, err := temporal.NewWorker(nil, nil); !errors.Is(err, work.ErrUnavailable) {
		t.Errorf("NewWorker(nil) = %v, want work.ErrUnavailable", err)
	}
}
