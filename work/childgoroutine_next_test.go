package work_test

import (
	"context"
	"errors"
	"runtime/pprof"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// A child that uses pprof.Do (which restores its goroutine's labels to
// those of the child's context: none) must not strip the Supervisor's
// label from the next Work that its goroutine runs: that Work's child,
// closing its Supervisor with a context not derived from its own, is
// still refused (else its Close waits for it until closeWithin).
func TestNextWorkKeepsLabel(t *testing.T) {
	s := work.New(work.WithMaxRunning(1))
	defer s.Close(context.Background())
	o := work.NewOwner("a")
	release := make(chan struct{})
	a, err := s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: func(ctx context.Context) (string, error) {
		pprof.Do(ctx, pprof.Labels("phase", "fetch"), func(context.Context) {})
		<-release
		return "a", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: func(context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), closeWithin)
		defer cancel()
		if err := s.Close(ctx); !errors.Is(err, work.ErrCloseFromChild) {
			return "", err
		}
		return "refused", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	close(release) // a settles; its goroutine runs b next
	if st, out, err := s.Result(context.Background(), o, a.ID, work.MaxResultWait); err != nil || out != "a" {
		t.Fatalf("a: %s %q %v", st.State, out, err)
	}
	if st, out, err := s.Result(context.Background(), o, b.ID, work.MaxResultWait); err != nil || out != "refused" {
		t.Fatalf("b: %s %q %v; want its Close refused", st.State, out, err)
	}
}
