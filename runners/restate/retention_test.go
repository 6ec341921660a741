package restate_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// A record the registry evicts by age goes with its Work's state, on
// every path of the admission that evicts it (here a repeated launch,
// which admits nothing): a coordinator with no age bound never lists a
// Work whose output is gone.
func TestAgeEvictionKeepsRecordAndStateTogether(t *testing.T) {
	s := server(t)
	ns := "ret" + strconv.FormatInt(namespaces.Add(1), 10)
	plain := deploy(t, map[string]restate.Child{"echo": echoChild}, restate.WithServicePrefix(ns))
	aged := restate.New(restate.WithServicePrefix(ns), restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin),
		restate.WithRPCTimeout(time.Minute), restate.WithOptions(work.WithRetention(64, time.Second)))
	defer aged.Close(context.Background())
	ctx := context.Background()
	o := work.NewOwner(fmt.Sprintf("retention-%d", time.Now().UnixNano()))
	settle := func(e *work.Engine, id string) {
		t.Helper()
		for {
			st, _, err := e.Result(ctx, o, id, work.MaxResultWait)
			if err != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				return
			}
		}
	}
	old, err := plain.Start(ctx, echoSpec(o))
	if err != nil {
		t.Fatal(err)
	}
	settle(plain, old.ID)
	launch := echoSpec(o)
	launch.CallID, launch.InputDigest = "call-1", sha256.Sum256([]byte(launch.Input))
	first, err := aged.Start(ctx, launch)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the first Work is past the age bound (the aged Engine
	// hides it by its clock), then repeat the launch: its admission
	// evicts the expired record and replays.
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := aged.Status(ctx, o, old.ID); errors.Is(err, work.ErrNotFound) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the first Work never passed the age bound")
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	again, err := aged.Start(ctx, launch)
	if err != nil || again.ID != first.ID {
		t.Fatalf("the repeated launch: %+v %v, want %s", again, err, first.ID)
	}
	l, err := plain.List(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range l {
		if st.Work.ID != old.ID {
			continue
		}
		_, out, err := plain.Result(ctx, o, old.ID, 0)
		if err != nil || out != "x" {
			t.Fatalf("the expired Work is still listed, but its output is gone: %q %v", out, err)
		}
	}
}
