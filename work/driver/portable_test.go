package driver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// fakeStore is a Store kept in memory, recording the calls Portable makes.
type fakeStore struct {
	mu       sync.Mutex
	recs     []Record
	outputs  map[string]string
	progress map[string]observe.Progress
	progErr  error // Progress's error
	reads    int   // Records calls
	marks    []string
	forgot   []string
	live     map[string]bool // DetachLive's answer per id
	sent     []Guidance
	approval map[string]ApprovalInfo
	index    []ApprovalEntry
	answered []string
	admitted []NewWork
	cancels  int    // CancelWork calls
	ended    int    // CancelWork answers ErrRunEnded this many times first
	refuse   string // Admit refuses with this limit
	// metas is each Work's update metadata (ReadUpdateMeta: absent, not
	// found); metaFails makes that many reads fail first.
	metas     map[string][]UpdateMeta
	metaFails int
	// settleAfter makes Work id terminal (completed) after that many
	// further reads of the registry.
	settleAfter map[string]int
}

func (f *fakeStore) Records(_ context.Context, _ work.Owner) ([]Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	for i := range f.recs {
		if n, ok := f.settleAfter[f.recs[i].ID]; ok {
			if n == 0 {
				f.recs[i].State, f.recs[i].HasResult = work.StateCompleted, true
				delete(f.settleAfter, f.recs[i].ID)
			} else {
				f.settleAfter[f.recs[i].ID] = n - 1
			}
		}
	}
	return append([]Record(nil), f.recs...), nil
}

func (f *fakeStore) Progress(_ context.Context, id string) (observe.Progress, bool, error) {
	p, ok := f.progress[id]
	return p, ok, f.progErr
}

func (f *fakeStore) Output(_ context.Context, _ work.Owner, id string) (string, error) {
	out, ok := f.outputs[id]
	if !ok {
		return "", work.ErrNotFound
	}
	return out, nil
}

func (f *fakeStore) MarkRead(_ context.Context, _ work.Owner, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.marks = append(f.marks, id)
	for i := range f.recs {
		if f.recs[i].ID == id {
			f.recs[i].Read = true
		}
	}
	return nil
}

func (f *fakeStore) ReadUpdateMeta(_ context.Context, _ work.Owner, id string, after int) ([]UpdateMeta, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.metaFails > 0 {
		f.metaFails--
		return nil, false, errors.New("metadata unreadable")
	}
	ms, ok := f.metas[id]
	var out []UpdateMeta
	for _, m := range ms {
		if m.Seq > after {
			out = append(out, m)
		}
	}
	return out, ok, nil
}

func (f *fakeStore) DetachLive(_ context.Context, _ work.Owner, id string) (bool, error) {
	return f.live[id], nil
}

func (f *fakeStore) ForgetSettled(_ context.Context, _ work.Owner, id string) error {
	f.forgot = append(f.forgot, id)
	return nil
}

func (f *fakeStore) SendGuidance(_ context.Context, _ work.Owner, _ Record, g Guidance) (int, time.Time, error) {
	f.sent = append(f.sent, g)
	return len(f.sent), t0, nil
}

func (f *fakeStore) ReleaseOwner(context.Context, work.Owner) error         { return nil }
func (f *fakeStore) SetPool(context.Context, work.Owner, work.Budget) error { return nil }

func (f *fakeStore) ReadUpdates(context.Context, work.Owner, string, int) ([]work.Update, bool, error) {
	return nil, true, nil
}

func (f *fakeStore) ApprovalIndex(context.Context) ([]ApprovalEntry, error) { return f.index, nil }

func (f *fakeStore) Approval(_ context.Context, _ work.Owner, id string) (ApprovalInfo, error) {
	info, ok := f.approval[id]
	if !ok {
		return ApprovalInfo{}, work.ErrNotFound
	}
	return info, nil
}

func (f *fakeStore) AnswerApproval(_ context.Context, _ work.Owner, id string, approve bool) error {
	f.answered = append(f.answered, fmt.Sprint(id, approve))
	return nil
}

func (f *fakeStore) Admissible() error { return nil }

func (f *fakeStore) CancelWork(_ context.Context, _ work.Owner, id string) (work.CancelReceipt, error) {
	f.cancels++
	if f.ended > 0 {
		f.ended--
		return work.CancelReceipt{}, ErrRunEnded
	}
	return work.CancelReceipt{WorkID: id, Accepted: true, State: work.StateCancelRequested, AcceptedAt: t0}, nil
}

func (f *fakeStore) Admit(_ context.Context, w NewWork) (work.Ref, string, string, error) {
	if f.refuse != "" {
		return work.Ref{}, f.refuse, "", Detail(work.ErrLimit, f.refuse)
	}
	f.admitted = append(f.admitted, w)
	return work.Ref{ID: w.ID, TargetID: w.TargetID, Durable: true}, "", "", nil
}

// waitingStore adds the Waiter fast path: the Work ends with final.
type waitingStore struct {
	*fakeStore
	final Record
	out   string
	err   error
}

func (w waitingStore) Wait(context.Context, work.Owner, string) (Record, string, bool, error) {
	if w.err != nil {
		return Record{}, "", false, w.err
	}
	return w.final, w.out, true, nil
}

func id(n int) string { return fmt.Sprintf("%032x", n) }

// newPortable returns a Portable over s, set up with opts as an engine's
// WithOptions; its foreground engine is closed when the test ends.
func newPortable(t *testing.T, s Store, opts ...work.Option) (*Portable, *enginetest.Recorder) {
	t.Helper()
	rec := &enginetest.Recorder{}
	opts = append([]work.Option{work.WithObserver(rec)}, opts...)
	limits, err := ResolveLimits(opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := &Portable{}
	Init(p, s, Config{Options: opts, Limits: limits, PollInterval: time.Millisecond})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p, rec
}

func eventsOf(rec *enginetest.Recorder, typ observe.EventType) int {
	n := 0
	for _, e := range rec.Events() {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestPortableResultReadMark(t *testing.T) {
	o := work.NewOwner("coordinator")
	fs := &fakeStore{recs: []Record{{ID: id(1), Label: "echo", State: work.StateCompleted, HasResult: true, Created: t0}},
		outputs: map[string]string{id(1): "the output"}}
	p, rec := newPortable(t, fs)
	for i, wantRead := range []bool{false, true} {
		st, out, err := p.Result(context.Background(), o, id(1), 0)
		if err != nil || out != "the output" || st.ResultRead != wantRead {
			t.Fatalf("read %d: %q, ResultRead %v, %v; want the output, ResultRead %v", i+1, out, st.ResultRead, err, wantRead)
		}
	}
	if len(fs.marks) != 1 || eventsOf(rec, observe.EventResultRead) != 1 {
		t.Fatalf("two reads marked %d times with %d result-read events, want 1 and 1", len(fs.marks), eventsOf(rec, observe.EventResultRead))
	}
}

// TestPortableStatusProgress: a running Work's Status carries the
// Store's progress counts, and the Store's error when it cannot read them
// (a payload it cannot decode), never a zero.
func TestPortableStatusProgress(t *testing.T) {
	o := work.NewOwner("coordinator")
	want := observe.Progress{Done: 1, Total: 2}
	fs := &fakeStore{recs: []Record{{ID: id(1), Label: "echo", State: work.StateRunning, Created: t0}},
		progress: map[string]observe.Progress{id(1): want}}
	p, _ := newPortable(t, fs)
	if st, err := p.Status(context.Background(), o, id(1)); err != nil || st.Progress != want {
		t.Fatalf("Status = %+v, %v; want progress %+v", st, err, want)
	}
	fs.progErr = Wrap(work.ErrUnavailable, errors.New("undecodable"))
	if st, err := p.Status(context.Background(), o, id(1)); !errors.Is(err, work.ErrUnavailable) {
		t.Fatalf("Status = %+v, %v; want the Store's ErrUnavailable", st, err)
	}
}

func TestPortableResultWait(t *testing.T) {
	o := work.NewOwner("coordinator")
	running := Record{ID: id(1), Label: "echo", State: work.StateRunning, Created: t0}
	for _, tc := range []struct {
		name    string
		store   func(*fakeStore) Store
		timeout time.Duration
		want    observe.State
		out     string
		err     error
	}{
		{"polled until it settles", func(f *fakeStore) Store { f.settleAfter = map[string]int{id(1): 2}; return f },
			work.MaxResultWait, work.StateCompleted, "polled", nil},
		{"zero timeout does not wait", func(f *fakeStore) Store { f.settleAfter = map[string]int{id(1): 1}; return f },
			0, work.StateRunning, "", nil},
		{"waiter brings the output", func(f *fakeStore) Store {
			final := running
			final.State, final.HasResult = work.StateCompleted, true
			return waitingStore{fakeStore: f, final: final, out: "waited"}
		}, time.Second, work.StateCompleted, "waited", nil},
		{"waiter: detached meanwhile", func(f *fakeStore) Store { return waitingStore{fakeStore: f, err: work.ErrNotFound} },
			time.Second, "", "", work.ErrNotFound},
		{"negative timeout", func(f *fakeStore) Store { return f }, -1, "", "", work.ErrInvalidTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeStore{recs: []Record{running}, outputs: map[string]string{id(1): "polled"}}
			p, _ := newPortable(t, tc.store(fs))
			st, out, err := p.Result(context.Background(), o, id(1), tc.timeout)
			if !errors.Is(err, tc.err) || st.State != tc.want || out != tc.out {
				t.Fatalf("%s %q %v, want %s %q %v", st.State, out, err, tc.want, tc.out, tc.err)
			}
		})
	}
}

func TestPortableChecks(t *testing.T) {
	o := work.NewOwner("coordinator")
	fs := &fakeStore{recs: []Record{
		{ID: id(1), Label: "fn", Kind: work.KindFunction, State: work.StateRunning, Created: t0},
		{ID: id(2), Label: "agent", Kind: work.KindAgent, State: work.StateRunning, Created: t0},
	}, progress: map[string]observe.Progress{id(2): {Done: 3}}}
	p, _ := newPortable(t, fs)
	ctx := context.Background()
	reads := fs.reads
	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"status zero owner", work.ErrInvalidOwner, func() error { _, err := p.Status(ctx, work.Owner{}, id(1)); return err }},
		{"status bad id", work.ErrNotFound, func() error { _, err := p.Status(ctx, o, "nope"); return err }},
		{"send empty", work.ErrEmptyMessage, func() error { _, err := p.Send(ctx, o, id(9), "c", ""); return err }},
		{"answer zero owner", work.ErrInvalidOwner, func() error { _, err := p.Answer(ctx, work.Owner{}, id(1), "c", "hi"); return err }},
		{"approve bad id", work.ErrNotFound, func() error { return p.Approve(ctx, o, "nope") }},
		{"deny zero owner", work.ErrInvalidOwner, func() error { return p.Deny(ctx, work.Owner{}, id(1)) }},
		{"pool negative", work.ErrInvalidBudget, func() error { return p.SetPool(ctx, o, work.Budget{MaxTurns: -2}) }},
		{"pool zero owner", work.ErrInvalidOwner, func() error { return p.SetPool(ctx, work.Owner{}, work.Budget{MaxTurns: 2}) }},
	} {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	if fs.reads != reads {
		t.Errorf("bad input read the registry %d times, want none", fs.reads-reads)
	}
	if _, err := p.Send(ctx, o, id(1), "c", "hi"); !errors.Is(err, work.ErrNotAgent) {
		t.Errorf("send to a function child: %v, want ErrNotAgent", err)
	}
	r, err := p.Answer(ctx, o, id(1), "call_1", "hi")
	if err != nil || r.ID != id(1)+".1" || r.Cursor != "1" || len(fs.sent) != 1 || fs.sent[0].Command != Digest("call_1") || !fs.sent[0].Answer {
		t.Errorf("answer to a function child: %+v %v (sent %+v)", r, err, fs.sent)
	}
	if st, err := p.Status(ctx, o, id(2)); err != nil || st.Progress.Done != 3 {
		t.Errorf("status of running agent: %+v %v, want its progress", st, err)
	}
}

func TestPortableDetach(t *testing.T) {
	o := work.NewOwner("coordinator")
	fs := &fakeStore{recs: []Record{
		{ID: id(1), Label: "a", State: work.StateRunning, Created: t0},
		{ID: id(2), Label: "a", State: work.StateRunning, Created: t0},
		{ID: id(3), Label: "a", State: work.StateFailed, Created: t0},
	}, live: map[string]bool{id(1): true}}
	p, rec := newPortable(t, fs)
	for _, n := range []int{1, 2, 3} {
		if r, err := p.Detach(context.Background(), o, id(n)); err != nil || r.ID != id(n) {
			t.Fatalf("detach %d: %+v %v", n, r, err)
		}
	}
	// A live Work detaches itself (its workflow reports the event); one
	// that ended meanwhile and a terminal one are forgotten here.
	if len(fs.forgot) != 2 || fs.forgot[0] != id(2) || fs.forgot[1] != id(3) || eventsOf(rec, observe.EventDetached) != 2 {
		t.Fatalf("forgot %v with %d detached events, want the ended and the terminal Work with 2", fs.forgot, eventsOf(rec, observe.EventDetached))
	}
}

func TestPortablePending(t *testing.T) {
	fs := &fakeStore{approval: map[string]ApprovalInfo{}}
	for n := 1; n <= MaxPending+3; n++ {
		// The index lists the newest first; one Work ended and one was
		// answered meanwhile.
		fs.index = append(fs.index, ApprovalEntry{ID: id(n), Requested: t0.Add(time.Duration(MaxPending+3-n) * time.Second)})
		switch n {
		case 5:
		case 6:
			fs.approval[id(n)] = ApprovalInfo{}
		default:
			fs.approval[id(n)] = ApprovalInfo{Found: true, Label: "gated", Requested: t0.Add(time.Duration(MaxPending+3-n) * time.Second)}
		}
	}
	p, _ := newPortable(t, fs)
	got, err := p.Pending(context.Background(), work.Approver())
	if err != nil || len(got) != MaxPending {
		t.Fatalf("%d requests, %v; want %d", len(got), err, MaxPending)
	}
	for i := 1; i < len(got); i++ {
		if got[i].RequestedAt.Before(got[i-1].RequestedAt) {
			t.Fatalf("request %d is older than the one before it", i)
		}
	}
	if got[0].Work.ID != id(MaxPending+3) {
		t.Fatalf("first request %s, want the oldest %s", got[0].Work.ID, id(MaxPending+3))
	}
	if err := p.Approve(context.Background(), work.Approver(), id(7)); err != nil || len(fs.answered) != 1 || fs.answered[0] != id(7)+"true" {
		t.Fatalf("approve: %v, answered %v", err, fs.answered)
	}
}

func TestPortableRetainAge(t *testing.T) {
	o := work.NewOwner("coordinator")
	old := time.Now().Add(-time.Hour)
	fs := &fakeStore{recs: []Record{
		{ID: id(1), State: work.StateCompleted, Created: old, Finished: old},
		{ID: id(2), State: work.StateRunning, Created: old},
	}}
	p, _ := newPortable(t, fs, work.WithRetention(0, time.Minute))
	l, err := p.List(context.Background(), o)
	if err != nil || len(l) != 1 || l[0].Work.ID != id(2) {
		t.Fatalf("List with an age bound: %+v %v, want the running Work only", l, err)
	}
	if _, err := p.Status(context.Background(), o, id(1)); !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("Status of expired Work: %v, want ErrNotFound", err)
	}
}

func TestPortableStart(t *testing.T) {
	ctx := context.Background()
	fs := &fakeStore{}
	p, rec := newPortable(t, fs, work.WithMaxDepth(1), work.WithMaxResultBytes(100), work.WithMaxOutstanding(3))
	o := work.NewOwner("coordinator")
	spec := work.Spec{Owner: o, Target: work.Target{Label: "research", Kind: work.KindAgent}, Input: "in",
		MaxResultBytes: 10, CallID: "call_1", Run: func(context.Context) (string, error) { return "", nil }}
	ref, err := p.Start(ctx, spec)
	if err != nil || len(fs.admitted) != 1 {
		t.Fatalf("Start: %+v %v, %d admitted", ref, err, len(fs.admitted))
	}
	w := fs.admitted[0]
	key, _ := LaunchIdentity(spec)
	if ref.ID != w.ID || !contract.IsID(w.ID) || w.TargetID != "research" || w.MaxResultBytes != 10 || w.Admission.MaxOutstanding != 3 ||
		w.Admission.Record.ID != w.ID || w.Admission.Launch != key || key == "" || w.Admission.Eff != BudgetDims(w.Budget) || w.Created.Location() != time.UTC {
		t.Fatalf("the admission: %+v", w)
	}
	if w.Approval != nil {
		t.Fatalf("a Start with no NeedsApproval has Approval %+v, want nil", w.Approval)
	}
	held := spec
	held.NeedsApproval, held.CallID = true, "call_2"
	if _, err := p.Start(ctx, held); err != nil || len(fs.admitted) != 2 || fs.admitted[1].Approval == nil || fs.admitted[1].Approval.Timeout != 24*time.Hour {
		t.Fatalf("a Start with NeedsApproval: %v, admitted %+v; want Approval with the default 24 h timeout", err, fs.admitted[1:])
	}
	fs.admitted = fs.admitted[:1]
	if _, err := p.Start(ctx, work.Spec{Owner: o}); !errors.Is(err, work.ErrInvalidSpec) {
		t.Fatalf("Start of an invalid Spec: %v, want ErrInvalidSpec", err)
	}
	fs.refuse = observe.LimitOutstanding
	if _, err := p.Start(ctx, spec); !errors.Is(err, work.ErrLimit) || eventsOf(rec, observe.EventRefused) != 1 {
		t.Fatalf("a refused Start: %v with %d refused events, want ErrLimit and 1", err, eventsOf(rec, observe.EventRefused))
	}
	if len(fs.admitted) != 1 {
		t.Fatalf("%d admitted, want the first Start only", len(fs.admitted))
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Start(ctx, spec); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("Start after Close: %v, want ErrClosed", err)
	}
	if _, err := p.Call(ctx, spec); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("Call after Close: %v, want ErrClosed", err)
	}
}

func TestPortableCancel(t *testing.T) {
	o := work.NewOwner("coordinator")
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		state  observe.State
		ended  int
		asks   int
		accept bool
		want   observe.State
	}{
		{"terminal: refused, never asked", work.StateCompleted, 0, 0, false, work.StateCompleted},
		{"running: the Work's decision", work.StateRunning, 0, 1, true, work.StateCancelRequested},
		{"a run that ended twice: asked again", work.StateRunning, 2, 3, true, work.StateCancelRequested},
		{"a run that keeps ending: refused after three asks", work.StateRunning, 5, 3, false, work.StateRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeStore{recs: []Record{{ID: id(1), State: tc.state, Created: t0}}, ended: tc.ended}
			p, _ := newPortable(t, fs)
			r, err := p.Cancel(ctx, o, id(1))
			if err != nil || r.Accepted != tc.accept || r.State != tc.want || fs.cancels != tc.asks || r.WorkID != id(1) {
				t.Fatalf("%+v %v after %d asks; want accepted %v, %s after %d", r, err, fs.cancels, tc.accept, tc.want, tc.asks)
			}
		})
	}
	p, _ := newPortable(t, &fakeStore{})
	if _, err := p.Cancel(ctx, o, id(2)); !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("cancel of an unknown Work: %v, want ErrNotFound", err)
	}
}

// TestZeroPortable: every method of a Portable that Init did not set up
// (an engine's zero value) answers work.ErrNotInitialized, never a panic;
// a method added later is called too.
func TestZeroPortable(t *testing.T) {
	var p Portable
	v := reflect.ValueOf(&p)
	errType := reflect.TypeFor[error]()
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		mt := m.Type()
		if mt.NumOut() == 0 || mt.Out(mt.NumOut()-1) != errType {
			continue // Observer, Now: no error to answer
		}
		args := make([]reflect.Value, mt.NumIn())
		for j := range args {
			args[j] = reflect.Zero(mt.In(j))
			if mt.In(j) == reflect.TypeFor[context.Context]() {
				args[j] = reflect.ValueOf(context.Background())
			}
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s on the zero Portable panics: %v", name, r)
				}
			}()
			out := m.Call(args)
			if err, _ := out[len(out)-1].Interface().(error); !errors.Is(err, work.ErrNotInitialized) {
				t.Errorf("%s on the zero Portable: %v, want ErrNotInitialized", name, err)
			}
		}()
	}
	if _, ok := p.Observer().(observe.NopObserver); !ok {
		t.Errorf("the zero Portable's Observer: %v, want observe.NopObserver (*work.Engine: never nil)", p.Observer())
	}
}

// TestPortableCloseFromChild: a foreground child's Close or Shutdown of
// its own durable engine fails with work.ErrCloseFromChild and closes
// nothing (the engine still answers and reports no shutdown), as the
// in-process engine's does; and an idle engine's Shutdown with an ended
// context is drained, reported once (it waits for nothing).
func TestPortableCloseFromChild(t *testing.T) {
	p, rec := newPortable(t, &fakeStore{})
	e := NewEngine(p)
	o := work.NewOwner("coordinator")
	var closeErr, shutErr error
	out, err := e.Call(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "f", Kind: work.KindFunction},
		Run: func(ctx context.Context) (string, error) {
			closeErr = e.Close(ctx)
			_, shutErr = e.Shutdown(ctx)
			return "ran on", nil
		}})
	if err != nil || out != "ran on" {
		t.Fatalf("Call = %q, %v", out, err)
	}
	if !errors.Is(closeErr, work.ErrCloseFromChild) || !errors.Is(shutErr, work.ErrCloseFromChild) {
		t.Fatalf("a child's Close, Shutdown = %v, %v; want ErrCloseFromChild both", closeErr, shutErr)
	}
	if p.life.Closed() || len(rec.Shutdowns()) != 0 {
		t.Fatalf("after a child's refused Close: closed %v, reports %v; want open, none", p.life.Closed(), rec.Shutdowns())
	}
	if _, err := e.Call(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "f", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }}); err != nil {
		t.Fatalf("Call after a child's refused Close: %v", err)
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	rep, err := e.Shutdown(ended)
	if err != nil || !rep.Drained || len(rec.Shutdowns()) != 1 {
		t.Fatalf("idle Shutdown(ended ctx) = %v, %v, reports %v; want drained, reported once", rep, err, rec.Shutdowns())
	}
}
