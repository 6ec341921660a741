package work_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// closeWithin is the bound a test's Close waits with: a Close that would
// deadlock ends there, closed, and the test fails rather than hangs.
const closeWithin = 5 * time.Second

// TestCloseFromChildRefused: a child that closes (or shuts down) its own
// Supervisor, from its goroutine or from a goroutine it started and waits
// for, with its own context or one not derived from it, is refused with
// ErrCloseFromChild and nothing is closed. Without the check the Close
// would wait for the caller until closeWithin.
func TestCloseFromChildRefused(t *testing.T) {
	h := newHarness(t)
	closers := map[string]func(context.Context) error{
		"close": h.s.Close,
		"shutdown": func(ctx context.Context) error {
			_, err := h.s.Shutdown(ctx)
			return err
		},
	}
	for name, closeIt := range closers {
		for _, c := range []struct{ mode, ctx string }{
			{"background", "own"}, {"foreground", "own"},
			{"background", "foreign"}, {"foreground", "foreign"}, {"spawned", "foreign"},
		} {
			mode := c.mode
			t.Run(name+"/"+mode+"/"+c.ctx, func(t *testing.T) {
				var own context.Context
				refused := func() error {
					parent := context.Background()
					if c.ctx == "own" {
						parent = own
					}
					ctx, cancel := context.WithTimeout(parent, closeWithin)
					defer cancel()
					err := closeIt(ctx)
					var we *work.Error
					if !errors.Is(err, work.ErrCloseFromChild) || !errors.As(err, &we) || we.Code != "close_from_child" {
						return fmt.Errorf("%s from a child = %v, want close_from_child", name, err)
					}
					return nil
				}
				run := func(ctx context.Context) (string, error) {
					own = ctx
					if mode == "spawned" {
						done := make(chan error, 1)
						go func() { done <- refused() }()
						if err := <-done; err != nil {
							return "", err
						}
					} else if err := refused(); err != nil {
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
					t.Fatalf("the Supervisor was closed: %v", err)
				}
			})
		}
	}
}

// TestChildClosesAnotherSupervisor: the label names its Supervisor, so a
// child of one Supervisor closes another (whose own child is running)
// normally.
func TestChildClosesAnotherSupervisor(t *testing.T) {
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
	out, err := a.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), closeWithin)
		defer cancel()
		return "closed", b.s.Close(ctx)
	}})
	close(release)
	if err != nil || out != "closed" {
		t.Fatalf("closing another Supervisor from a child = %q %v", out, err)
	}
	if _, err := b.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: immediate("")}); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("start on the closed Supervisor = %v", err)
	}
	st, err := b.s.Status(t.Context(), coord, bref.ID)
	if err != nil || st.State != work.StateCancelled {
		t.Fatalf("its child = %+v %v, want cancelled", st, err)
	}
}

// TestChildProfileLabel: a child's goroutine, and a goroutine it starts,
// carry ProfileLabel in goroutine profiles, with one value per Supervisor.
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
	var prof bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&prof, 1); err != nil {
		t.Fatal(err)
	}
	close(hold)
	for i, h := range hs {
		if _, _, err := h.s.Result(context.Background(), coord, refs[i].ID, work.MaxResultWait); err != nil {
			t.Fatal(err)
		}
	}
	// Two children and the two goroutines they started, each holding a
	// function of this test (other tests' goroutines may run too); the
	// profile groups goroutines by stack and labels.
	values := make(map[string]int)
	for rec := range strings.SplitSeq(prof.String(), "\n\n") {
		if !strings.Contains(rec, "work_test.TestChildProfileLabel.func") {
			continue
		}
		_, after, ok := strings.Cut(rec, `"`+work.ProfileLabel+`":"`)
		if !ok {
			t.Fatalf("a child's goroutine without %s:\n%s", work.ProfileLabel, rec)
		}
		v, _, _ := strings.Cut(after, `"`)
		c := 0
		for line := range strings.SplitSeq(rec, "\n") {
			if n, _, ok := strings.Cut(line, " @ "); ok {
				c, _ = strconv.Atoi(n)
			}
		}
		values[v] += c
	}
	if len(values) != 2 {
		t.Fatalf("label values %v, want one per Supervisor:\n%s", values, prof.String())
	}
	for v, n := range values {
		if n != 2 {
			t.Fatalf("%d goroutines labelled %s, want the child and the one it started", n, v)
		}
	}
}

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
