package restate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// An Engine made with no ingress is unusable (driver.Config.Unusable,
// whose every method the driver's TestUnusablePortable holds): it
// answers work.ErrUnavailable naming WithIngress and never panics.
func TestNoIngress(t *testing.T) {
	eng := restate.New()
	o := work.NewOwner("o")
	_, serr := eng.Status(context.Background(), o, driver.NewID())
	_, aerr := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindAgent},
		Run: func(context.Context) (string, error) { return "", nil }})
	for what, err := range map[string]error{"Status": serr, "Start": aerr} {
		if !errors.Is(err, work.ErrUnavailable) || !strings.Contains(err.Error(), "WithIngress") {
			t.Errorf("%s = %v, want work.ErrUnavailable naming WithIngress", what, err)
		}
	}
	if err := eng.Close(context.Background()); err != nil {
		t.Errorf("Close = %v", err)
	}
}
