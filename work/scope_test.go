package work_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// TestScopeEndedRefusesStarts: a goroutine a child leaked cannot start work
// in the child's scope once the child has returned, in the background and
// in the foreground.
func TestScopeEndedRefusesStarts(t *testing.T) {
	s := work.New()
	defer s.Close(context.Background())
	owner := work.NewOwner("coord")
	noop := func(context.Context) (string, error) { return "", nil }
	target := work.Target{Label: "child", Kind: work.KindAgent}
	for _, tc := range []struct {
		name  string
		start func(scope chan<- work.Owner)
	}{
		{"background", func(scope chan<- work.Owner) {
			ref, err := s.Start(context.Background(), work.Spec{Owner: owner, Target: target, Run: func(ctx context.Context) (string, error) {
				ex, _ := work.ExecutionFrom(ctx)
				scope <- ex.Scope()
				return "", nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Result(context.Background(), owner, ref.ID, work.MaxResultWait); err != nil {
				t.Fatal(err)
			}
		}},
		{"foreground", func(scope chan<- work.Owner) {
			if _, err := s.Call(context.Background(), work.Spec{Owner: owner, Target: target, Run: func(ctx context.Context) (string, error) {
				ex, _ := work.ExecutionFrom(ctx)
				scope <- ex.Scope()
				return "", nil
			}}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scopes := make(chan work.Owner, 1)
			tc.start(scopes)
			scope := <-scopes
			if _, err := s.Start(context.Background(), work.Spec{Owner: scope, Target: target, Run: noop}); !errors.Is(err, work.ErrScopeEnded) {
				t.Errorf("Start in an ended scope: err = %v, want ErrScopeEnded", err)
			}
			if _, err := s.Call(context.Background(), work.Spec{Owner: scope, Target: target, Run: noop}); !errors.Is(err, work.ErrScopeEnded) {
				t.Errorf("Call in an ended scope: err = %v, want ErrScopeEnded", err)
			}
			if list, _ := s.List(t.Context(), scope); len(list) != 0 {
				t.Errorf("ended scope lists %d works", len(list))
			}
		})
	}
}

// TestTopLevelOwnerIDWithSlash: "/" is reserved for child scopes, so a
// top-level owner cannot alias one.
func TestTopLevelOwnerIDWithSlash(t *testing.T) {
	s := work.New()
	defer s.Close(context.Background())
	spec := work.Spec{Owner: work.NewOwner("coord/0123"), Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }}
	if _, err := s.Start(context.Background(), spec); !errors.Is(err, work.ErrInvalidOwner) {
		t.Errorf("Start: err = %v, want ErrInvalidOwner", err)
	}
	if _, err := s.Call(context.Background(), spec); !errors.Is(err, work.ErrInvalidOwner) {
		t.Errorf("Call: err = %v, want ErrInvalidOwner", err)
	}
}

// TestForgedScopeOwnerRefused: a top-level owner id with "/" is refused by
// every operation, so "owner/<workId>" never reaches that child's scope.
func TestForgedScopeOwnerRefused(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	inner, _ := h.running(c.ex.Scope(), agent)
	forged := work.NewOwner(coord.ID() + "/" + ref.ID)
	if forged.ID() != c.ex.Scope().ID() {
		t.Fatalf("forged id %q is not the scope's %q", forged.ID(), c.ex.Scope().ID())
	}
	refused := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, work.ErrInvalidOwner) {
			t.Errorf("%s: err = %v, want invalid_owner", name, err)
		}
	}
	_, err := h.s.Status(t.Context(), forged, inner.ID)
	refused("Status", err)
	_, err = h.s.List(t.Context(), forged)
	refused("List", err)
	_, _, err = h.s.Result(t.Context(), forged, inner.ID, 0)
	refused("Result", err)
	_, err = h.s.Send(t.Context(), forged, inner.ID, "c", "steer")
	refused("Send", err)
	_, err = h.s.Cancel(t.Context(), forged, inner.ID)
	refused("Cancel", err)
	_, err = h.s.Detach(t.Context(), forged, inner.ID)
	refused("Detach", err)
	if rows, more, _ := boundary.Rows(t.Context(), h.s, forged); rows != nil || more != 0 {
		t.Errorf("Rows = %v, %d", rows, more)
	}
	h.s.Release(t.Context(), forged)
	if st := h.status(c.ex.Scope(), inner.ID); st.State != work.StateRunning {
		t.Fatalf("inner Work after the forged calls: %s", st.State)
	}
}
