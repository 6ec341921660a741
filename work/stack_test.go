package work_test

import (
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// TestSettleFitsFirstStack: with the no-op Observer a child goroutine runs
// a trivial child and settles its Work (eviction of the owner's oldest
// terminal Work included) within its first stack, 2 KB: growing it deep in
// settle costs more than the rest of settling (a copy of every frame). It
// runs in a process of its own, where debug.SetMaxStack(2048) makes any
// stack that grows beyond 2 KB a fatal error. The race detector makes
// every frame larger: with it the bound is 4 KB.
func TestSettleFitsFirstStack(t *testing.T) {
	if os.Getenv("AGENTWORK_STACK_PROBE") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSettleFitsFirstStack$", "-test.count=1")
		cmd.Env = append(os.Environ(), "AGENTWORK_STACK_PROBE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			if len(out) > 2000 {
				out = out[:2000]
			}
			t.Fatalf("a child goroutine's stack grew beyond %d bytes: %v\n%s", settleStackLimit(), err, out)
		}
		return
	}
	ctx := context.Background()
	s := work.New(work.WithMaxStarts(0), work.WithRetention(8, 0))
	defer s.Close(ctx)
	o := work.NewOwner("stack")
	spec := work.Spec{Owner: o, Target: agent, Run: immediate("x")}
	round := func() {
		ref, err := s.Start(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if st, out, err := s.Result(ctx, o, ref.ID, work.MaxResultWait); err != nil || out != "x" {
			t.Fatal(st.State, err)
		}
	}
	// The goroutines that stay (this one included) grow their stacks
	// first; no collection shrinks them while the limit is set.
	for range 100 {
		round()
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMaxStack(debug.SetMaxStack(settleStackLimit()))
	for range 200 {
		round()
	}
}

// settleStackLimit returns TestSettleFitsFirstStack's bound.
func settleStackLimit() int {
	if raceEnabled {
		return 4096
	}
	return 2048
}

// TestForegroundAgentStack: a foreground agent child's goroutine starts
// with its stack grown at once beyond 16 KB (to 32 KB), and a function
// child's does not. In a process of its own, debug.SetMaxStack(16 KB)
// makes that growth a fatal error: the agent's call must die of it, the
// function's must not.
func TestForegroundAgentStack(t *testing.T) {
	probe := os.Getenv("AGENTWORK_STACK_PROBE")
	if probe == "" {
		for _, c := range []struct {
			kind string
			dies bool
		}{{"agent", true}, {"function", false}} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestForegroundAgentStack$", "-test.count=1")
			cmd.Env = append(os.Environ(), "AGENTWORK_STACK_PROBE="+c.kind)
			out, err := cmd.CombinedOutput()
			died := err != nil && strings.Contains(string(out), "goroutine stack exceeds 16384-byte limit")
			if died != c.dies {
				if len(out) > 2000 {
					out = out[:2000]
				}
				t.Errorf("%s child: died of its stack %v, want %v (%v)\n%s", c.kind, died, c.dies, err, out)
			}
		}
		return
	}
	ctx := context.Background()
	s := work.New()
	defer s.Close(ctx)
	o := work.NewOwner("stack")
	call := func(target work.Target) {
		if out, err := s.Call(ctx, work.Spec{Owner: o, Target: target, Run: immediate("x")}); err != nil || out != "x" {
			t.Fatal(out, err)
		}
	}
	for range 10 {
		call(fn)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 10))
	if probe == "agent" {
		call(agent)
	} else {
		call(fn)
	}
}
