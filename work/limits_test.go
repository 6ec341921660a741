package work_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// snapshot is what a refused start must leave unchanged.
type snapshot struct {
	census map[observe.State]int
	list   []work.Status
	events int
}

func (h *harness) snapshot(o work.Owner) snapshot {
	l, _ := h.s.List(context.Background(), o)
	return snapshot{census(h.s), l, len(h.obs.rec.Events())}
}

// refused starts one more Work for o and checks it is refused with ErrLimit
// naming reason, that nothing was registered, and that exactly one
// EventRefused was emitted.
func (h *harness) refused(o work.Owner, reason string) {
	h.t.Helper()
	before := h.snapshot(o)
	ran := false
	_, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: agent, Run: func(context.Context) (string, error) {
		ran = true
		return "", nil
	}})
	if !errors.Is(err, work.ErrLimit) {
		h.t.Fatalf("err = %v, want ErrLimit", err)
	}
	wantCode(h.t, err, "limit_exceeded")
	if !strings.Contains(err.Error(), reason) {
		h.t.Fatalf("error %q does not name %q", err, reason)
	}
	after := h.snapshot(o)
	// Events of Works settled just before may still be arriving: look only
	// at events without a Work id.
	var evs []observe.Event
	for _, e := range h.obs.rec.Events()[before.events:] {
		if e.WorkID == "" {
			evs = append(evs, e)
		}
	}
	if len(evs) != 1 || evs[0].Type != observe.EventRefused || evs[0].ErrorClass != reason || evs[0].WorkID != "" ||
		evs[0].Owner != o.ID() || evs[0].Depth != o.Depth() || evs[0].Target != agent.Label {
		h.t.Fatalf("events on refusal = %+v", evs)
	}
	if !reflect.DeepEqual(before.census, after.census) || !reflect.DeepEqual(before.list, after.list) {
		h.t.Fatalf("refusal changed the registry:\n%v %v\n%v %v", before.census, before.list, after.census, after.list)
	}
	if ran {
		h.t.Fatal("refused work ran")
	}
}

func TestRunningLimitFIFOFairAcrossOwners(t *testing.T) {
	for _, tt := range []struct {
		name    string
		enqueue []string // owner letter + index, in Start order
		want    []string // order in which they must start
	}{
		{"grouped", []string{"A1", "A2", "A3", "B1", "B2", "C1"}, []string{"A1", "B1", "C1", "A2", "B2", "A3"}},
		{"interleaved", []string{"B1", "A1", "A2", "B2", "C1", "C2", "C3"}, []string{"B1", "A1", "C1", "B2", "A2", "C2", "C3"}},
		{"one owner", []string{"A1", "A2", "A3", "A4"}, []string{"A1", "A2", "A3", "A4"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t) // default running limit: 8
			if h.s.LimitsForTest().MaxRunning != work.DefaultMaxRunning || work.DefaultMaxRunning != 8 {
				t.Fatalf("running limit = %d", h.s.LimitsForTest().MaxRunning)
			}
			var blockers []*child
			for range 8 {
				_, c := h.running(work.NewOwner("X"), fn)
				blockers = append(blockers, c)
			}
			started := make(chan string)
			children := map[string]*child{}
			for _, name := range tt.enqueue {
				c := h.child()
				children[name] = c
				ref, err := h.s.Start(t.Context(), work.Spec{Owner: work.NewOwner(name[:1]), Target: agent,
					Run: func(ctx context.Context) (string, error) {
						started <- name
						return c.run(ctx)
					}})
				if err != nil {
					t.Fatal(err)
				}
				if st := h.status(work.NewOwner(name[:1]), ref.ID); st.State != work.StateQueued {
					t.Fatalf("%s: %s, want queued", name, st.State)
				}
			}
			if c := census(h.s); c[work.StateRunning] != 8 || c[work.StateQueued] != len(tt.enqueue) {
				t.Fatalf("census = %v", c)
			}
			// Free one slot at a time; exactly one queued Work takes it.
			var got []string
			for i := range tt.enqueue {
				if i < len(blockers) {
					blockers[i].complete("")
				} else {
					children[got[i-len(blockers)]].complete("")
				}
				got = append(got, <-started)
				if c := census(h.s); c[work.StateRunning] != 8 {
					t.Fatalf("running = %d", c[work.StateRunning])
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("start order %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCancelQueuedKeepsRoundRobin(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	_, blocker := h.running(work.NewOwner("X"), fn)
	started := make(chan string, 8)
	ids := map[string]string{}
	for _, name := range []string{"A1", "B1", "A2", "C1"} {
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: work.NewOwner(name[:1]), Target: agent,
			Run: func(context.Context) (string, error) { started <- name; return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = ref.ID
	}
	h.s.Cancel(t.Context(), work.NewOwner("B"), ids["B1"]) // B leaves the ring
	blocker.complete("")
	var got []string
	for range 3 {
		got = append(got, <-started)
	}
	if fmt.Sprint(got) != "[A1 C1 A2]" {
		t.Fatalf("order %v", got)
	}
	for _, n := range []string{"A1", "C1", "A2"} {
		h.obs.waitTerminal(ids[n])
	}
}

func TestOutstandingLimit(t *testing.T) {
	h := newHarness(t)
	if work.DefaultMaxOutstanding != 32 || h.s.LimitsForTest().MaxOutstanding != 32 {
		t.Fatal("outstanding default is not 32")
	}
	var kids []*child
	var refs []work.Ref
	for range 32 { // 8 running, 24 queued
		c := h.child()
		refs = append(refs, h.start(coord, agent, c))
		kids = append(kids, c)
	}
	h.refused(coord, observe.LimitOutstanding)
	// Detached Work still counts: it is still outstanding.
	h.s.Detach(t.Context(), coord, refs[31].ID)
	h.refused(coord, observe.LimitOutstanding)
	// Other owners are unaffected.
	h.start(work.NewOwner("other"), agent, h.child())
	// One finishing frees one place.
	<-kids[0].started
	kids[0].complete("")
	h.obs.waitTerminal(refs[0].ID)
	h.start(coord, agent, h.child())
	h.refused(coord, observe.LimitOutstanding)
	// Cancelling queued Work frees places too.
	h.s.Cancel(t.Context(), coord, refs[20].ID)
	h.start(coord, agent, h.child())
}

func TestStartsLimit(t *testing.T) {
	t.Run("default 64", func(t *testing.T) {
		h := newHarness(t, work.WithMaxOutstanding(1000))
		if work.DefaultMaxStarts != 64 || h.s.LimitsForTest().MaxStarts != 64 {
			t.Fatal("starts default is not 64")
		}
		for range 64 {
			ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: fn, Run: immediate("")})
			if err != nil {
				t.Fatal(err)
			}
			h.obs.waitTerminal(ref.ID)
		}
		h.refused(coord, observe.LimitStarts)
		// Release gives the owner a fresh budget.
		h.s.Release(t.Context(), coord)
		if _, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: fn, Run: immediate("")}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("0 is unlimited", func(t *testing.T) {
		h := newHarness(t, work.WithMaxStarts(0), work.WithMaxOutstanding(10000))
		for range 300 {
			ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: fn, Run: immediate("")})
			if err != nil {
				t.Fatal(err)
			}
			h.obs.waitTerminal(ref.ID)
		}
	})
	t.Run("custom", func(t *testing.T) {
		h := newHarness(t, work.WithMaxStarts(2))
		for range 2 {
			h.start(coord, fn, h.child())
		}
		h.refused(coord, observe.LimitStarts)
	})
}

func TestDepthLimitThroughScopes(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(16))
	if work.DefaultMaxDepth != 4 {
		t.Fatal("depth default is not 4")
	}
	type level struct {
		scope work.Owner
		c     *child
	}
	levels := make(chan level)
	run := func(ctx context.Context) (string, error) {
		ex, ok := work.ExecutionFrom(ctx)
		if !ok {
			return "", errors.New("no execution")
		}
		c := h.child()
		levels <- level{ex.Scope(), c}
		return c.run(ctx)
	}
	if _, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: run}); err != nil {
		t.Fatal(err)
	}
	for depth := 1; ; depth++ {
		l := <-levels
		if l.scope.Depth() != depth {
			t.Fatalf("scope depth %d, want %d", l.scope.Depth(), depth)
		}
		if depth == 4 {
			h.refused(l.scope, observe.LimitDepth)
			// Foreground calls obey the same limit.
			_, err := h.s.Call(t.Context(), work.Spec{Owner: l.scope, Target: agent, Run: immediate("")})
			if !errors.Is(err, work.ErrLimit) {
				t.Fatalf("Call at depth 4: %v", err)
			}
			break
		}
		if _, err := h.s.Start(t.Context(), work.Spec{Owner: l.scope, Target: agent, Run: run}); err != nil {
			t.Fatalf("start at depth %d: %v", depth, err)
		}
	}
	if c := census(h.s); c[work.StateRunning] != 4 {
		t.Fatalf("census = %v", c)
	}
}

// TestLimitOptions: every limit option's 0 is its documented default (or
// no limit), and a negative value changes nothing and is reported as
// ErrInvalidLimit, naming the option, by ResolveLimits and by every
// Start, Call and SetPool; nil options are ignored.
func TestLimitOptions(t *testing.T) {
	def := work.Limits{MaxRunning: 8, MaxOutstanding: 32, MaxStarts: 64, MaxDepth: 4, MaxDuration: work.DefaultMaxDuration,
		MaxResultBytes: 1 << 20, RetainTerminal: 64, MaxMessageBytes: 16 << 10, MaxQueuedGuidance: 32,
		MaxQueuedGuidanceBytes: 64 << 10, MaxCommandRecords: 256, SnapshotInterval: 15 * time.Second, StatusRows: 10,
		Observer: observe.NopObserver{}}
	with := func(edit func(*work.Limits)) work.Limits { l := def; edit(&l); return l }
	for _, tc := range []struct {
		name string
		opts []work.Option
		want work.Limits
		bad  string // the option an ErrInvalidLimit names, or ""
	}{
		{"none", []work.Option{nil, work.WithClock(nil), work.WithObserver(nil)}, def, ""},
		{"positive", []work.Option{work.WithMaxRunning(2), work.WithMaxOutstanding(3), work.WithMaxStarts(4), work.WithMaxDepth(5),
			work.WithMaxResultBytes(6), work.WithRetention(7, time.Hour), work.WithMaxMessageBytes(8), work.WithGuidanceQueue(9, 10),
			work.WithCommandRecords(11), work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute})},
			work.Limits{MaxRunning: 2, MaxOutstanding: 3, MaxStarts: 4, MaxDepth: 5, MaxDuration: time.Minute, MaxResultBytes: 6,
				RetainTerminal: 7, RetainAge: time.Hour, MaxMessageBytes: 8, MaxQueuedGuidance: 9, MaxQueuedGuidanceBytes: 10,
				MaxCommandRecords: 11, SnapshotInterval: 15 * time.Second, StatusRows: 10, Observer: observe.NopObserver{}}, ""},
		// 0 after another value: the default again (or no limit), never "keep".
		{"zero", []work.Option{work.WithMaxRunning(2), work.WithMaxRunning(0), work.WithMaxOutstanding(3), work.WithMaxOutstanding(0),
			work.WithMaxStarts(0), work.WithMaxDepth(5), work.WithMaxDepth(0), work.WithMaxResultBytes(0), work.WithRetention(7, time.Hour),
			work.WithRetention(0, 0), work.WithMaxMessageBytes(0), work.WithGuidanceQueue(0, 0), work.WithCommandRecords(0),
			work.WithDefaultBudget(work.Budget{MaxDuration: 0})},
			with(func(l *work.Limits) { l.MaxStarts, l.MaxResultBytes = 0, 0 }), ""},
		{"no deadline", []work.Option{work.WithDefaultBudget(work.Budget{MaxDuration: -1})}, with(func(l *work.Limits) { l.MaxDuration = 0 }), ""},
		{"MaxRunning -1", []work.Option{work.WithMaxRunning(-1)}, def, "WithMaxRunning"},
		{"MaxOutstanding -1", []work.Option{work.WithMaxOutstanding(-1)}, def, "WithMaxOutstanding"},
		{"MaxStarts -1", []work.Option{work.WithMaxStarts(-1)}, def, "WithMaxStarts"},
		{"MaxDepth -1", []work.Option{work.WithMaxDepth(-1)}, def, "WithMaxDepth"},
		{"MaxResultBytes -1", []work.Option{work.WithMaxResultBytes(-1)}, def, "WithMaxResultBytes"},
		{"Retention count -1", []work.Option{work.WithRetention(-1, 0)}, def, "WithRetention"},
		{"Retention age -1ns", []work.Option{work.WithRetention(0, -1)}, def, "WithRetention"},
		{"MaxMessageBytes -1", []work.Option{work.WithMaxMessageBytes(-1)}, def, "WithMaxMessageBytes"},
		{"GuidanceQueue count -1", []work.Option{work.WithGuidanceQueue(-1, 0)}, def, "WithGuidanceQueue"},
		{"GuidanceQueue bytes -1", []work.Option{work.WithGuidanceQueue(0, -1)}, def, "WithGuidanceQueue"},
		{"CommandRecords -1", []work.Option{work.WithCommandRecords(-1)}, def, "WithCommandRecords"},
		{"deployment view", []work.Option{work.WithDeploymentGauges("a"), work.WithDeploymentGauges("b", "c"),
			work.WithSnapshotInterval(time.Minute), work.WithStatusRows(3)},
			with(func(l *work.Limits) {
				l.ExportDeployment, l.DeploymentTargets, l.SnapshotInterval, l.StatusRows = true, []string{"a", "b", "c"}, time.Minute, 3
			}), ""},
		// Below 1 s raised to it; 0 the default again; 0 rows lists none.
		{"deployment view floor", []work.Option{work.WithSnapshotInterval(time.Millisecond), work.WithStatusRows(0)},
			with(func(l *work.Limits) { l.SnapshotInterval, l.StatusRows = time.Second, 0 }), ""},
		{"deployment view zero", []work.Option{work.WithSnapshotInterval(time.Minute), work.WithSnapshotInterval(0)}, def, ""},
		{"SnapshotInterval -1ns", []work.Option{work.WithSnapshotInterval(-1)}, def, "WithSnapshotInterval"},
		{"StatusRows -1", []work.Option{work.WithStatusRows(-1)}, def, "WithStatusRows"},
		// The first invalid option is the one reported; later valid ones still apply.
		{"first of two", []work.Option{work.WithMaxDepth(-2), work.WithMaxStarts(-3), work.WithMaxDepth(2)},
			with(func(l *work.Limits) { l.MaxDepth = 2 }), "WithMaxDepth(-2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := work.ResolveLimits(tc.opts...)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ResolveLimits = %+v, want %+v", got, tc.want)
			}
			s := work.New(tc.opts...)
			defer s.Close(context.Background())
			if l := s.LimitsForTest(); !reflect.DeepEqual(l, got) {
				t.Errorf("the engine's limits = %+v, ResolveLimits = %+v", l, got)
			}
			o := work.NewOwner("limits")
			_, serr := s.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindFunction}, Run: immediate("x")})
			_, cerr := s.Call(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindFunction}, Run: immediate("x")})
			perr := s.SetPool(t.Context(), o, work.Budget{})
			if tc.bad == "" {
				if err != nil || serr != nil || cerr != nil || perr != nil {
					t.Fatalf("ResolveLimits: %v, Start: %v, Call: %v, SetPool: %v; want no error", err, serr, cerr, perr)
				}
				return
			}
			for what, e := range map[string]error{"ResolveLimits": err, "Start": serr, "Call": cerr, "SetPool": perr} {
				if !errors.Is(e, work.ErrInvalidLimit) || !strings.Contains(e.Error(), tc.bad) {
					t.Errorf("%s: %v; want ErrInvalidLimit naming %s", what, e, tc.bad)
				}
			}
		})
	}
	s := work.New(work.WithObserver(nil))
	defer s.Close(context.Background())
	if _, ok := boundary.Observer(s).(observe.NopObserver); !ok {
		t.Fatalf("observer = %T, want NopObserver", boundary.Observer(s))
	}
}
