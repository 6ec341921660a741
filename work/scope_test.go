package work_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
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
			if list, _ := s.List(scope); len(list) != 0 {
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

// TestCloseCancelsForegroundCalls: Close cancels a foreground call in
// progress and waits until its child has returned; the call yields
// ErrClosed.
func TestCloseCancelsForegroundCalls(t *testing.T) {
	s := work.New()
	entered, returned := make(chan struct{}), make(chan struct{})
	result := make(chan error, 1)
	go func() {
		_, err := s.Call(context.Background(), work.Spec{Owner: work.NewOwner("coord"), Target: work.Target{Label: "fg", Kind: work.KindAgent},
			Run: func(ctx context.Context) (string, error) {
				defer close(returned)
				close(entered)
				<-ctx.Done()
				return "", ctx.Err()
			}})
		result <- err
	}()
	<-entered
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Fatal("Close returned before the foreground child did")
	}
	if err := <-result; !errors.Is(err, work.ErrClosed) {
		t.Errorf("foreground call after Close: err = %v, want ErrClosed", err)
	}
}

// gateObserver blocks delivery of EventFailed until released.
type gateObserver struct {
	work.NopObserver
	entered chan struct{}
	release chan struct{}
}

func (g *gateObserver) Event(_ context.Context, e work.Event) {
	if e.Type == work.EventFailed {
		close(g.entered)
		<-g.release
	}
}

// TestResultNeverAheadOfObserver: a Result waiting for settlement returns
// only after the observer has been given the terminal event. The observer
// is held inside that event; during the hold (a bounded window in which a
// premature wake-up would show) Result must not return.
func TestResultNeverAheadOfObserver(t *testing.T) {
	g := &gateObserver{entered: make(chan struct{}), release: make(chan struct{})}
	s := work.New(work.WithObserver(g))
	var once sync.Once
	open := func() { once.Do(func() { close(g.release) }) }
	defer s.Close(context.Background())
	defer open() // never leave the worker held, even when failing
	owner := work.NewOwner("coord")
	finish := make(chan struct{})
	ref, err := s.Start(context.Background(), work.Spec{Owner: owner, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { <-finish; return "", errors.New("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan work.State, 1)
	go func() {
		st, _, _ := s.Result(context.Background(), owner, ref.ID, work.MaxResultWait)
		done <- st.State
	}()
	close(finish)
	<-g.entered
	select {
	case st := <-done:
		t.Fatalf("Result returned %s while the observer was still being told", st)
	case <-time.After(50 * time.Millisecond):
	}
	open()
	if st := <-done; st != work.StateFailed {
		t.Fatalf("Result state = %s", st)
	}
}

// bindGate holds Bind until released.
type bindGate struct {
	work.NopObserver
	entered chan struct{}
	release chan struct{}
}

func (g *bindGate) Bind(_, exec context.Context, _ work.Event) context.Context {
	close(g.entered)
	<-g.release
	return exec
}

// TestStartOverlappingCloseOrRelease: Bind runs without the Supervisor's
// lock (Close and Release complete while it is held), and a start that
// overlaps them is accepted and then cancelled before it runs.
func TestStartOverlappingCloseOrRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		overlap func(s *work.Supervisor, o work.Owner)
		visible bool
	}{
		{"close", func(s *work.Supervisor, _ work.Owner) {
			if err := s.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}, true},
		{"release", func(s *work.Supervisor, o work.Owner) { s.Release(o) }, false},
		{"release and close", func(s *work.Supervisor, o work.Owner) {
			s.Release(o)
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
			st, err := s.Status(owner, r.ref.ID)
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
			s.Census(func(_ string, st work.State, c int) {
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

// TestTerminalResultNeverAheadOfObserver: a Result that arrives after the
// Work became terminal but while its terminal event is still being
// delivered (the Work has no done channel: nobody waited) returns only
// after the observer has been given the event.
func TestTerminalResultNeverAheadOfObserver(t *testing.T) {
	g := &gateObserver{entered: make(chan struct{}), release: make(chan struct{})}
	s := work.New(work.WithObserver(g))
	var once sync.Once
	open := func() { once.Do(func() { close(g.release) }) }
	defer s.Close(context.Background())
	defer open()
	owner := work.NewOwner("coord")
	ref, err := s.Start(context.Background(), work.Spec{Owner: owner, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", errors.New("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered // terminal, its event held in delivery
	done := make(chan work.State, 1)
	go func() {
		st, _, _ := s.Result(context.Background(), owner, ref.ID, work.MaxResultWait)
		done <- st.State
	}()
	select {
	case st := <-done:
		t.Fatalf("Result returned %s while the observer was still being told", st)
	case <-time.After(50 * time.Millisecond):
	}
	open()
	if st := <-done; st != work.StateFailed {
		t.Fatalf("Result state = %s", st)
	}
}
