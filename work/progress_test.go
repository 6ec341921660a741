package work_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestProgressCounts: a function child's reports and an agent child's
// counts reach Status.Progress; EventProgress is rate-limited to one per
// ProgressInterval per Work by the engine's clock, carries the counts,
// and never follows the terminal event; the JSON has no progress.
func TestProgressCounts(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("coord")
	ref, c := h.running(o, fn)

	work.ReportProgress(c.ctx, 3, 10)
	if got := h.status(o, ref.ID).Progress; got != (observe.Progress{Done: 3, Total: 10}) {
		t.Fatalf("Progress = %+v, want done 3 of 10", got)
	}
	if n := len(h.obs.ofType(observe.EventProgress)); n != 1 {
		t.Fatalf("%d progress events after the first report, want 1", n)
	}
	// Within the interval: counts update, no event.
	c.ex.ReportProgressForTest(4, 10)
	c.ex.CountModelRequestForTest()
	c.ex.CountToolCallForTest()
	c.ex.CountToolCallForTest()
	h.clk.Advance(work.ProgressInterval - time.Millisecond)
	c.ex.ReportProgressForTest(5, 10)
	if n := len(h.obs.ofType(observe.EventProgress)); n != 1 {
		t.Fatalf("%d progress events within one interval, want 1", n)
	}
	want := observe.Progress{Done: 5, Total: 10, ModelRequests: 1, ToolCalls: 2}
	if got := h.status(o, ref.ID).Progress; got != want {
		t.Fatalf("Progress = %+v, want %+v", got, want)
	}
	h.clk.Advance(time.Millisecond)
	c.ex.ReportProgressForTest(-1, 10) // negative counts as 0
	evs := h.obs.ofType(observe.EventProgress)
	if len(evs) != 2 {
		t.Fatalf("%d progress events after an interval, want 2", len(evs))
	}
	e := evs[1]
	want.Done = 0
	if e.WorkID != ref.ID || e.Target != fn.Label || e.Progress != want || !e.Time.Equal(t0.Add(work.ProgressInterval)) {
		t.Fatalf("progress event = %+v, want counts %+v at +1s", e, want)
	}

	// The JSON projection is unchanged by progress.
	b, err := json.Marshal(h.status(o, ref.ID))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ","); got != "attachment,attempt,createdAt,resultAvailable,startedAt,state,targetLabel,work" {
		t.Fatalf("status JSON keys = %s", got)
	}

	c.complete("ok")
	h.obs.waitTerminal(ref.ID)
	h.clk.Advance(time.Hour)
	c.ex.ReportProgressForTest(9, 10) // a leaked goroutine reporting late
	evs = h.obs.events(ref.ID)
	if last := evs[len(evs)-1]; last.Type != observe.EventCompleted {
		t.Fatalf("an event followed the terminal event: %+v", last)
	}
	if got := h.status(o, ref.ID).Progress.Done; got != 9 {
		t.Fatalf("late report not kept in the counts: %d", got)
	}
}

// TestProgressForegroundAndOutside: reporting from a foreground call or a
// context that is no child's does nothing.
func TestProgressForegroundAndOutside(t *testing.T) {
	h := newHarness(t)
	work.ReportProgress(context.Background(), 1, 2)
	out, err := h.s.Call(context.Background(), work.Spec{Owner: work.NewOwner("o"), Target: fn,
		Run: func(ctx context.Context) (string, error) {
			work.ReportProgress(ctx, 1, 2)
			ex, _ := work.ExecutionFrom(ctx)
			ex.CountModelRequestForTest()
			ex.CountToolCallForTest()
			return "done", nil
		}})
	if err != nil || out != "done" {
		t.Fatalf("Call = %q, %v", out, err)
	}
	if n := h.obs.count(observe.EventProgress); n != 0 {
		t.Fatalf("%d progress events for a foreground call", n)
	}
}

// TestProgressNeverBlocks: a report while another event of the Work is
// being delivered (the observer is stuck in it) returns at once.
func TestProgressNeverBlocks(t *testing.T) {
	blocker := &blockingObserver{entered: make(chan struct{}), release: make(chan struct{})}
	s := work.New(work.WithObserver(blocker), work.WithClock(fakeclock.New(t0)))
	defer s.Close(context.Background())
	o := work.NewOwner("o")
	ready := make(chan *work.Execution)
	finish := make(chan struct{})
	ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: agent, Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		ready <- ex
		<-finish
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ex := <-ready
	blocker.block.Store(true)
	sent := make(chan struct{})
	go func() { // Send's guidance-accepted event blocks in the observer
		defer close(sent)
		_, _ = s.Send(t.Context(), o, ref.ID, "", "steer")
	}()
	<-blocker.entered
	ex.ReportProgressForTest(1, 2) // must not wait for the observer
	ex.CountModelRequestForTest()
	close(blocker.release)
	<-sent
	close(finish)
	// The report made while the guidance event was being delivered was
	// not lost: Send's deliverer emitted it, with the counts of then.
	blocker.mu.Lock()
	got := slices.Clone(blocker.progress)
	blocker.mu.Unlock()
	if want := (observe.Progress{Done: 1, Total: 2, ModelRequests: 1}); len(got) != 1 || got[0] != want {
		t.Fatalf("progress events = %+v, want one %+v", got, want)
	}
	if st, _ := s.Status(t.Context(), o, ref.ID); st.Progress.Done != 1 || st.Progress.ModelRequests != 1 {
		t.Fatalf("counts = %+v", st.Progress)
	}
}

// TestProgressAllocs: reporting allocates nothing once the interval's event
// has gone out.
func TestProgressAllocs(t *testing.T) {
	h := newHarness(t)
	_, c := h.running(work.NewOwner("o"), agent)
	c.ex.ReportProgressForTest(0, 1)
	ctx := c.ctx
	n := testing.AllocsPerRun(1000, func() {
		work.ReportProgress(ctx, 1, 2)
		c.ex.CountModelRequestForTest()
		c.ex.CountToolCallForTest()
	})
	if n != 0 {
		t.Fatalf("reporting allocates %v per run, want 0", n)
	}
}

// BenchmarkReportProgress measures one report on the hot path (within the
// rate limit): go test -run '^$' -bench ReportProgress -benchmem ./work
func BenchmarkReportProgress(b *testing.B) {
	s := work.New(work.WithClock(fakeclock.New(t0)))
	defer s.Close(context.Background())
	ready := make(chan context.Context)
	finish := make(chan struct{})
	if _, err := s.Start(context.Background(), work.Spec{Owner: work.NewOwner("o"), Target: fn,
		Run: func(ctx context.Context) (string, error) { ready <- ctx; <-finish; return "", nil }}); err != nil {
		b.Fatal(err)
	}
	ctx := <-ready
	defer close(finish)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		work.ReportProgress(ctx, int64(i), int64(b.N))
	}
}

// BenchmarkCountModelRequest measures the progress count of a granted model request.
func BenchmarkCountModelRequest(b *testing.B) {
	s := work.New()
	defer s.Close(context.Background())
	ready := make(chan *work.Execution)
	finish := make(chan struct{})
	if _, err := s.Start(context.Background(), work.Spec{Owner: work.NewOwner("o"), Target: agent,
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			ready <- ex
			<-finish
			return "", nil
		}}); err != nil {
		b.Fatal(err)
	}
	ex := <-ready
	defer close(finish)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ex.CountModelRequestForTest()
		}
	})
}

// blockingObserver blocks in Event while block is set, until release is
// closed; entered is closed when the first blocked Event begins.
type blockingObserver struct {
	observe.NopObserver
	block    atomic.Bool
	once     sync.Once
	entered  chan struct{}
	release  chan struct{}
	mu       sync.Mutex
	progress []observe.Progress // EventProgress deliveries, in order
}

func (b *blockingObserver) Event(_ context.Context, ev observe.Event) {
	if ev.Type == observe.EventProgress {
		b.mu.Lock()
		b.progress = append(b.progress, ev.Progress)
		b.mu.Unlock()
		return
	}
	if b.block.Load() {
		b.once.Do(func() { close(b.entered) })
		<-b.release
	}
}
