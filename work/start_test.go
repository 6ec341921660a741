package work_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// bindGate holds Bind until released.
type bindGate struct {
	observe.NopObserver
	entered chan struct{}
	release chan struct{}
}

func (g *bindGate) Bind(_, exec context.Context, _ observe.Event) context.Context {
	close(g.entered)
	<-g.release
	return exec
}

// TestStartOverlappingCloseOrRelease: Bind runs without the engine's
// lock (Close and Release complete while it is held), and a start that
// overlaps them is accepted and then cancelled before it runs.
func TestStartOverlappingCloseOrRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		overlap func(s *work.Engine, o work.Owner)
		visible bool
	}{
		{"close", func(s *work.Engine, _ work.Owner) {
			if err := s.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}, true},
		{"release", func(s *work.Engine, o work.Owner) { s.Release(t.Context(), o) }, false},
		{"release and close", func(s *work.Engine, o work.Owner) {
			s.Release(t.Context(), o)
			if err := s.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &bindGate{entered: make(chan struct{}), release: make(chan struct{})}
			s := work.New(work.WithObserver(g))
			defer s.Close(context.Background())
			owner := work.NewOwner("coord")
			ran := make(chan struct{}, 1)
			type started struct {
				ref work.Ref
				err error
			}
			res := make(chan started, 1)
			go func() {
				ref, err := s.Start(context.Background(), work.Spec{Owner: owner, Target: work.Target{Label: "x", Kind: work.KindFunction},
					Run: func(context.Context) (string, error) { ran <- struct{}{}; return "", nil }})
				res <- started{ref, err}
			}()
			<-g.entered
			tc.overlap(s, owner) // must not wait for Bind
			close(g.release)
			r := <-res
			if r.err != nil {
				t.Fatalf("Start: %v", r.err)
			}
			st, err := s.Status(t.Context(), owner, r.ref.ID)
			switch {
			case tc.visible && (err != nil || st.State != work.StateCancelled):
				t.Errorf("after an overlapping close: %v %v, want cancelled", st.State, err)
			case !tc.visible && !errors.Is(err, work.ErrNotFound):
				t.Errorf("after an overlapping release: err = %v, want not found", err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ran:
				t.Error("the overlapped Work ran")
			default:
			}
			var unfinished, all int
			s.CensusForTest(func(_ string, st observe.State, c int) {
				all += c
				if !st.Terminal() {
					unfinished += c
				}
			})
			if unfinished != 0 {
				t.Errorf("%d unfinished works remain in the census", unfinished)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.visible]; all != want {
				t.Errorf("census holds %d works, want %d (a released owner's work is forgotten)", all, want)
			}
		})
	}
}
