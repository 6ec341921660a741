package work_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// closeWithin is the bound a test's Close waits with: a Close that would
// deadlock ends there, closed, and the test fails rather than hangs.
const closeWithin = 5 * time.Second

// closers are Close and Shutdown, as one signature.
func closers(s *work.Engine) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"close": s.Close,
		"shutdown": func(ctx context.Context) error {
			_, err := s.Shutdown(ctx)
			return err
		},
	}
}

// TestCloseFromChildRefused: a child that closes (or shuts down) its own
// engine with its own context, or one derived from it, from its
// goroutine or from a goroutine it started and waits for, is refused with
// ErrCloseFromChild and nothing is closed. Without the check the Close
// would wait for the caller until closeWithin.
func TestCloseFromChildRefused(t *testing.T) {
	h := newHarness(t, work.WithShutdownGrace(0)) // the fake clock's grace never ends
	for name, closeIt := range closers(h.s) {
		for _, mode := range []string{"background", "foreground", "spawned"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				refused := func(own context.Context) error {
					ctx, cancel := context.WithTimeout(own, closeWithin) // derived from the child's
					defer cancel()
					err := closeIt(ctx)
					var we *work.Error
					if !errors.Is(err, work.ErrCloseFromChild) || !errors.As(err, &we) || we.Code != "close_from_child" {
						return fmt.Errorf("%s from a child = %v, want close_from_child", name, err)
					}
					return nil
				}
				run := func(ctx context.Context) (string, error) {
					if mode == "spawned" {
						done := make(chan error, 1)
						go func() { done <- refused(ctx) }()
						if err := <-done; err != nil {
							return "", err
						}
					} else if err := refused(ctx); err != nil {
						return "", err
					}
					return "refused", nil
				}
				var out string
				var err error
				if mode == "foreground" {
					out, err = h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: run})
				} else {
					ref, serr := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: run})
					if serr != nil {
						t.Fatal(serr)
					}
					_, out, err = h.s.Result(context.Background(), coord, ref.ID, work.MaxResultWait)
				}
				if err != nil || out != "refused" {
					t.Fatalf("child = %q %v", out, err)
				}
				if _, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: immediate("")}); err != nil {
					t.Fatalf("the engine was closed: %v", err)
				}
			})
		}
	}
}

// TestCloseFromChildOtherContext: a child's call with a context not
// derived from its own is not recognised (the context is all Close goes
// by). It closes the engine and cancels the calling child's own Work
// like any Close. On the child's goroutine, Close waits for its caller
// and returns its context's error when that ends (here: when the child's
// own context ends, that is once Close has cancelled it); Shutdown with an
// ended context and no grace reports the caller as an orphan. From a
// goroutine the child started, with context.Background() (bounded here so
// that a failure ends), the call returns nil once the child has returned
// on its cancellation, and Shutdown orphans nothing.
func TestCloseFromChildOtherContext(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	// childCall is what a child sees: its engine, its own context,
	// where to send what Close or Shutdown answered, and whether the
	// child has returned.
	type childCall struct {
		s        *work.Engine
		own      context.Context
		answer   chan<- error
		returned *atomic.Bool
	}
	// spawn makes call on a goroutine the child starts; the child returns
	// when its own context ends, cancelled by that call, which must not
	// return before the child has.
	spawn := func(call func(*work.Engine) error) func(childCall) {
		return func(c childCall) {
			go func() {
				err := call(c.s)
				if !c.returned.Load() {
					err = fmt.Errorf("returned %v before the child did", err)
				}
				c.answer <- err
			}()
			<-c.own.Done()
		}
	}
	for _, c := range []struct {
		name  string
		call  func(childCall) // what the child does
		grace time.Duration
		want  error
	}{{
		name: "close/own goroutine",
		call: func(c childCall) {
			ctx, cancel := context.WithCancel(context.Background())
			defer context.AfterFunc(c.own, cancel)()
			c.answer <- c.s.Close(ctx)
		},
		want: context.Canceled,
	}, {
		name: "shutdown/own goroutine",
		call: func(c childCall) {
			rep, err := c.s.Shutdown(ended)
			if err == nil && (rep.Drained || rep.OrphanCount() != 1) {
				err = fmt.Errorf("report %v, want the caller orphaned", rep)
			}
			c.answer <- err
		},
	}, {
		name: "close/spawned goroutine",
		call: spawn(func(s *work.Engine) error {
			ctx, cancel := context.WithTimeout(context.Background(), closeWithin)
			defer cancel()
			return s.Close(ctx)
		}),
	}, {
		name: "shutdown/spawned goroutine",
		call: spawn(func(s *work.Engine) error {
			rep, err := s.Shutdown(ended)
			if err == nil && (rep.Drained || rep.OrphanCount() != 0) {
				err = fmt.Errorf("report %v, want nothing orphaned", rep)
			}
			return err
		}),
		grace: closeWithin,
	}} {
		t.Run(c.name, func(t *testing.T) {
			s := work.New(work.WithShutdownGrace(c.grace))
			o := work.NewOwner("o")
			answer := make(chan error, 1)
			var returned atomic.Bool
			ref, err := s.Start(t.Context(), work.Spec{Owner: o, Target: agent, Run: func(ctx context.Context) (string, error) {
				defer returned.Store(true)
				c.call(childCall{s: s, own: ctx, answer: answer, returned: &returned})
				return "", ctx.Err()
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-answer; !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("the child's call = %v, want %v", err, c.want)
			}
			if _, err := s.Start(t.Context(), work.Spec{Owner: o, Target: agent, Run: immediate("")}); !errors.Is(err, work.ErrClosed) {
				t.Fatalf("start after the child's call = %v, want closed", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), closeWithin)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				t.Fatalf("Close after = %v", err)
			}
			st, err := s.Status(t.Context(), o, ref.ID)
			if err != nil || st.State != work.StateCancelled {
				t.Fatalf("the calling child = %+v %v, want cancelled", st, err)
			}
		})
	}
}

// TestChildClosesAnotherEngine: a child of one engine closes
// another (whose own child is running) normally, with any context, its
// own included: its Execution names its own engine.
func TestChildClosesAnotherEngine(t *testing.T) {
	for _, ctxKind := range []string{"own", "other"} {
		t.Run(ctxKind, func(t *testing.T) {
			a, b := newHarness(t), newHarness(t)
			release := make(chan struct{})
			running := make(chan struct{})
			bref, err := b.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
				close(running)
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-release:
					return "late", nil
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			<-running
			out, err := a.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(own context.Context) (string, error) {
				parent := context.Background()
				if ctxKind == "own" {
					parent = own
				}
				ctx, cancel := context.WithTimeout(parent, closeWithin)
				defer cancel()
				return "closed", b.s.Close(ctx)
			}})
			close(release)
			if err != nil || out != "closed" {
				t.Fatalf("closing another engine from a child = %q %v", out, err)
			}
			if _, err := b.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: immediate("")}); !errors.Is(err, work.ErrClosed) {
				t.Fatalf("start on the closed engine = %v", err)
			}
			st, err := b.s.Status(t.Context(), coord, bref.ID)
			if err != nil || st.State != work.StateCancelled {
				t.Fatalf("its child = %+v %v, want cancelled", st, err)
			}
		})
	}
}

// labelsOf returns, for each record of a debug=1 goroutine profile whose
// stack holds a function whose name contains fn, the value of
// ProfileLabel ("" when absent) and the record's goroutine count.
func labelsOf(t *testing.T, prof, fn string) map[string]int {
	t.Helper()
	values := make(map[string]int)
	for rec := range strings.SplitSeq(prof, "\n\n") {
		if !strings.Contains(rec, fn) {
			continue
		}
		v := ""
		if _, after, ok := strings.Cut(rec, `"`+work.ProfileLabel+`":"`); ok {
			v, _, _ = strings.Cut(after, `"`)
		}
		c := 0
		for line := range strings.SplitSeq(rec, "\n") {
			if n, _, ok := strings.Cut(line, " @ "); ok {
				c, _ = strconv.Atoi(n)
			}
		}
		values[v] += c
	}
	return values
}

func goroutineProfile(t *testing.T) string {
	t.Helper()
	var prof bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&prof, 1); err != nil {
		t.Fatal(err)
	}
	return prof.String()
}

// TestChildProfileLabel: a child's goroutine, and a goroutine it starts,
// carry ProfileLabel in goroutine profiles, with one value per engine.
func TestChildProfileLabel(t *testing.T) {
	hold := make(chan struct{})
	var refs []work.Ref
	hs := []*harness{newHarness(t), newHarness(t)}
	for _, h := range hs {
		started := make(chan struct{})
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
			go func() { <-hold }()
			close(started)
			<-hold
			return "", nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
		<-started
	}
	prof := goroutineProfile(t)
	close(hold)
	for i, h := range hs {
		if _, _, err := h.s.Result(context.Background(), coord, refs[i].ID, work.MaxResultWait); err != nil {
			t.Fatal(err)
		}
	}
	// Two children and the two goroutines they started, each holding a
	// function of this test (other tests' goroutines may run too); the
	// profile groups goroutines by stack and labels.
	values := labelsOf(t, prof, "work_test.TestChildProfileLabel.func")
	if _, ok := values[""]; ok || len(values) != 2 {
		t.Fatalf("label values %v, want one per engine:\n%s", values, prof)
	}
	for v, n := range values {
		if n != 2 {
			t.Fatalf("%d goroutines labelled %s, want the child and the one it started", n, v)
		}
	}
}

// TestNextWorkKeepsLabel: a child that uses pprof.Do (which restores its
// goroutine's labels to those of the child's context: none) does not strip
// the engine's label from the next Work that its goroutine runs.
func TestNextWorkKeepsLabel(t *testing.T) {
	s := work.New(work.WithMaxRunning(1))
	defer s.Close(context.Background())
	o := work.NewOwner("a")
	release, hold, holding := make(chan struct{}), make(chan struct{}), make(chan struct{})
	a, err := s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: func(ctx context.Context) (string, error) {
		pprof.Do(ctx, pprof.Labels("phase", "fetch"), func(context.Context) {})
		<-release
		return "a", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Start(context.Background(), work.Spec{Owner: o, Target: fn, Run: func(context.Context) (string, error) {
		close(holding)
		<-hold
		return "b", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	close(release) // a settles; its goroutine runs b next
	<-holding
	prof := goroutineProfile(t)
	close(hold)
	for _, ref := range []work.Ref{a, b} {
		if st, _, err := s.Result(context.Background(), o, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCompleted {
			t.Fatalf("%s: %s %v", ref.ID, st.State, err)
		}
	}
	values := labelsOf(t, prof, "work_test.TestNextWorkKeepsLabel.func2")
	if _, ok := values[""]; ok || len(values) != 1 {
		t.Fatalf("b's goroutine labels %v, want the engine's:\n%s", values, prof)
	}
}
