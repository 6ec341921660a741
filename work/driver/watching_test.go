package driver_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// watcher is an Observer that counts the watches it began and ended.
type watcher struct {
	observe.NopObserver
	watched   []observe.Watched
	unwatched int
}

func (w *watcher) Watch(x observe.Watched) func() {
	w.watched = append(w.watched, x)
	return func() { w.unwatched++ }
}

type watched struct{}

func (watched) Snapshot(context.Context) (observe.Snapshot, error) { return observe.Snapshot{}, nil }

// TestWatching: Start has a Watcher Observer watch the Worker, Stop ends
// that watch once (a second Stop, and a Stop with no Start, do nothing),
// and an Observer that is no Watcher is not asked.
func TestWatching(t *testing.T) {
	var idle driver.Watching
	idle.Stop() // no Start: nothing to end

	o := &watcher{}
	var x driver.Watching
	x.Start(o, watched{})
	if len(o.watched) != 1 || o.watched[0] != (watched{}) || o.unwatched != 0 {
		t.Fatalf("after Start: watched %v, unwatched %d; want the Worker once, none ended", o.watched, o.unwatched)
	}
	x.Stop()
	x.Stop()
	if o.unwatched != 1 {
		t.Fatalf("after two Stops: %d watches ended, want 1", o.unwatched)
	}

	var nop driver.Watching
	nop.Start(observe.NopObserver{}, watched{})
	nop.Stop()
}
