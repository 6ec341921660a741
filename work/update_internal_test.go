package work

import (
	"context"
	"testing"
)

// TestUpdateStateOnlyWhenDeclared: a Work's update state is one pointer,
// allocated only for a Spec that declares updates, and the boundary of a
// Work that declares them (no question open) still allocates nothing.
func TestUpdateStateOnlyWhenDeclared(t *testing.T) {
	s := New(WithDefaultBudget(Budget{MaxDuration: -1}))
	defer s.Close(context.Background())
	o := NewOwner("mem")
	type seen struct {
		declared bool
		allocs   float64
	}
	for _, p := range []*UpdatePolicy{nil, {}} {
		ch := make(chan seen, 1)
		_, err := s.Start(context.Background(), Spec{Owner: o, Target: Target{Label: "a", Kind: KindAgent},
			Budget: Budget{MaxTurns: 1000}, Updates: p, Run: func(ctx context.Context) (string, error) {
				ex, _ := ExecutionFrom(ctx)
				n := testing.AllocsPerRun(100, func() { _, _ = ex.beginRequest() })
				ch <- seen{declared: ex.rt.(*item).upd != nil, allocs: n}
				return "", nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		got := <-ch
		if got.declared != (p != nil) {
			t.Fatalf("Updates %v: update state allocated = %v", p, got.declared)
		}
		if got.allocs != 0 {
			t.Fatalf("Updates %v: BeginRequest allocates %.1f times", p, got.allocs)
		}
	}
}
