package driver_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// TestLaunchTarget: the target info of a launch's context survives the
// trip through a Work's input to the context an Observer binds it with;
// without any, the context is left as it is.
func TestLaunchTarget(t *testing.T) {
	ctx := observe.WithTargetInfo(context.Background(), observe.TargetInfo{AgentID: "researcher-v1", Provider: "gcp.gemini", Description: "not carried"})
	id, provider := driver.LaunchTarget(ctx)
	got, ok := observe.TargetInfoFrom(driver.WithLaunchTarget(context.Background(), id, provider))
	if !ok || got != (observe.TargetInfo{AgentID: "researcher-v1", Provider: "gcp.gemini"}) {
		t.Fatalf("carried target info = %+v, %v", got, ok)
	}
	bare := context.Background()
	if id, provider := driver.LaunchTarget(bare); id != "" || provider != "" {
		t.Fatalf("LaunchTarget of a bare context = %q, %q", id, provider)
	}
	if driver.WithLaunchTarget(bare, "", "") != bare {
		t.Fatal("WithLaunchTarget with nothing to carry made a new context")
	}
}
