package work_test

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/agentwork/agentwork/work"
)

// A closed Supervisor on the system clock is not kept alive by its
// deadline timer: a Work with a deadline that ended before Close leaves no
// armed timer behind (before, the shared timer stayed armed for the
// default 30 minutes and held the Supervisor, its Observer and all it
// refers to).
func TestClosedSupervisorIsCollectable(t *testing.T) {
	wp := func() weak.Pointer[work.Supervisor] {
		s := work.New() // system clock, default 30 min maximum duration
		o := work.NewOwner("a")
		ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: immediate("x")})
		if err != nil {
			t.Fatal(err)
		}
		if st, _, err := s.Result(context.Background(), o, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCompleted {
			t.Fatalf("Result: %v %v", st.State, err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		return weak.Make(s)
	}()
	for range 5 {
		runtime.GC()
	}
	if wp.Value() != nil {
		t.Fatal("a closed Supervisor stays reachable (its deadline timer is still armed)")
	}
}
