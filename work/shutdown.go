package work

import (
	"context"
	"errors"
	"sort"

	"github.com/agentwork/agentwork/work/observe"
)

// Shutdown drains the in-process engine gracefully. It refuses new starts
// at once (they fail with ErrClosed, as do new foreground calls of
// top-level owners; a running child's calls go on), lets queued and running
// Work finish while ctx allows, then does what Close does (cancels what is
// left, closes every Subscription) and waits up to the shutdown grace
// (WithShutdownGrace, by the engine's clock) for the cancelled children to
// return. Each Work still running then is reported to the Observer as
// observe.EventOrphaned and counted in the report; its goroutine exits when
// its child returns.
//
// Shutdown returns a content-free report of the Works it waited for, and
// hands it to the Observer when it is an observe.ShutdownObserver. It is
// safe to call concurrently with everything else, and more than once (a
// later call reports only what was still live). Close is the immediate
// variant. Like Close, Shutdown called with a context that carries an
// Execution of this engine (a child's own context, or one derived
// from it) fails at once with ErrCloseFromChild and changes nothing, where
// it would otherwise wait for the calling child itself. Called with any
// other context it does not know its caller (see Close), and its drain
// waits for the calling child too. On the child's own goroutine, which
// cannot return while it waits, it drains until ctx ends (never, with a
// context that never ends), then cancels, waits the grace and reports the
// caller's Work as an orphan.
//
// A durable runner's Engine has no Work of its own to drain (its Work
// goes on on its service): its Shutdown closes it, as Close does, and
// reports Drained (when Close returned nil) and how long that took, to
// its caller and to the Observer as above. A Close refused with
// ErrCloseFromChild or ErrNotInitialized changed nothing and is not
// reported.
func (s *Engine) Shutdown(ctx context.Context) (observe.ShutdownReport, error) {
	if s != nil && s.impl != nil {
		if sh, ok := s.impl.(shutdowner); ok {
			return sh.Shutdown(ctx) // it reports its own
		}
		start := s.impl.Now()
		err := s.impl.Close(ctx)
		rep := observe.ShutdownReport{Drained: err == nil, Duration: s.impl.Now().Sub(start)}
		if !errors.Is(err, ErrCloseFromChild) && !errors.Is(err, ErrNotInitialized) {
			reportShutdown(ctx, s.impl.Observer(), rep)
		}
		return rep, err
	}
	if s.uninitialized() {
		return observe.ShutdownReport{}, ErrNotInitialized
	}
	if s.closedFromChild(ctx) {
		return observe.ShutdownReport{}, ErrCloseFromChild
	}
	// What is live when draining begins is tracked in the same critical
	// section, so that a Work ending right after is still reported.
	tracked := make(map[*item]struct{})
	fgs := make(map[*foreground]struct{})
	s.mu.Lock()
	s.draining = true
	start := s.clock.Now()
	waits := s.liveLocked(tracked, fgs, true)
	s.mu.Unlock()
	drained := true
drain:
	for len(waits) > 0 {
		for _, ch := range waits {
			select {
			case <-ch:
			case <-ctx.Done():
				drained = false
				break drain
			}
		}
		s.mu.Lock()
		waits = s.liveLocked(tracked, fgs, true)
		s.mu.Unlock()
	}

	// Cancel what is left (nothing, when drained) and wait the grace.
	graceCtx, cancel := context.WithCancel(context.Background())
	stop := func() bool { return false }
	if s.grace > 0 {
		stop = s.clock.AfterFunc(s.grace, cancel)
	} else {
		cancel()
	}
	_ = s.Close(graceCtx)
	stop()
	cancel()

	var e emission
	s.mu.Lock()
	s.liveLocked(tracked, fgs, false) // Works accepted while Close ran
	now := s.clock.Now()
	settled := make(map[observe.ShutdownCount]int)
	orphaned := make(map[observe.ShutdownCount]int)
	for it := range tracked {
		key := observe.ShutdownCount{Target: it.target.Label, State: it.state()}
		if it.terminal() {
			settled[key]++
			continue
		}
		orphaned[key]++
		e.add(it, observe.Event{Type: observe.EventOrphaned, From: it.state(), Time: now, ErrorClass: ClassOrphaned})
	}
	for fg := range fgs {
		if _, live := s.foreground[fg]; live {
			orphaned[observe.ShutdownCount{Target: fg.target, State: StateRunning}]++
		}
	}
	s.unlockAndEmit(&e)
	rep := observe.ShutdownReport{Drained: drained, Duration: now.Sub(start),
		Settled: sortedCounts(settled), Orphaned: sortedCounts(orphaned)}
	reportShutdown(ctx, s.observer, rep)
	return rep, nil
}

// reportShutdown hands rep to o when it is an observe.ShutdownObserver,
// with ctx's values but not its cancellation.
func reportShutdown(ctx context.Context, o observe.Observer, rep observe.ShutdownReport) {
	if so, ok := o.(observe.ShutdownObserver); ok {
		so.ShutdownReported(context.WithoutCancel(ctx), rep)
	}
}

// liveLocked adds every queued and running Work and every foreground call
// to tracked and fgs, and, with wait, returns channels that each receive
// (a Work's waiter) or close (a foreground call's) once one of them
// finishes. A Work's waiter that is not waited for stays until the Work
// settles.
func (s *Engine) liveLocked(tracked map[*item]struct{}, fgs map[*foreground]struct{}, wait bool) []chan struct{} {
	var waits []chan struct{}
	add := func(it *item) {
		tracked[it] = struct{}{}
		if wait {
			w := &waiter{ch: make(chan struct{}, 1)}
			it.addWaiterLocked(w)
			waits = append(waits, w.ch)
		}
	}
	for it := s.running.front(); it != nil; it = it.next {
		add(it)
	}
	for os := s.ready.front(); os != nil; os = os.rnext {
		for q := os.queue.front(); q != nil; q = q.next {
			add(q)
		}
	}
	for _, it := range s.held {
		add(it)
	}
	for fg := range s.foreground {
		fgs[fg] = struct{}{}
		if wait {
			waits = append(waits, fg.done)
		}
	}
	return waits
}

func sortedCounts(m map[observe.ShutdownCount]int) []observe.ShutdownCount {
	out := make([]observe.ShutdownCount, 0, len(m))
	for k, n := range m {
		k.Count = n
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].State.Index() < out[j].State.Index()
	})
	return out
}
