// Package eventwait lets the telemetry tests wait until an Observer has
// processed a given lifecycle event.
//
// The engine closes a Work's done channel before it delivers the terminal
// event (and any guidance-dropped event after it), so Supervisor.Result can
// return while the Observer is still recording the end of the Work. Tests
// that then read spans, metrics or logs wait here first.
package eventwait

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Timeout bounds every Wait: a missing event fails the test instead of
// hanging it.
const Timeout = 10 * time.Second

// Observer forwards everything to the wrapped Observer and records which
// events it has finished delivering. It is a work.Watcher when the wrapped
// Observer is one.
type Observer struct {
	next work.Observer
	mu   sync.Mutex
	seen map[key]*entry
}

type key struct {
	id string
	t  work.EventType
}

type entry struct {
	ch     chan struct{}
	closed bool
}

// New wraps next.
func New(next work.Observer) *Observer {
	return &Observer{next: next, seen: make(map[key]*entry)}
}

// Begin forwards to the wrapped Observer.
func (o *Observer) Begin(ctx context.Context, c work.Call) (context.Context, func(work.CallEnd)) {
	return o.next.Begin(ctx, c)
}

// Bind forwards to the wrapped Observer.
func (o *Observer) Bind(caller, exec context.Context, e work.Event) context.Context {
	return o.next.Bind(caller, exec, e)
}

// Event forwards e and then marks it delivered.
func (o *Observer) Event(ctx context.Context, e work.Event) {
	o.next.Event(ctx, e)
	if e.WorkID == "" {
		return
	}
	o.mu.Lock()
	en := o.entry(key{e.WorkID, e.Type})
	if !en.closed {
		en.closed = true
		close(en.ch)
	}
	o.mu.Unlock()
}

// Watch forwards to the wrapped Observer when it is a Watcher.
func (o *Observer) Watch(s *work.Supervisor) func() {
	if w, ok := o.next.(work.Watcher); ok {
		return w.Watch(s)
	}
	return func() {}
}

// Wait returns once an event of type t for Work id has been delivered (at
// once if one already was), or an error after Timeout.
func (o *Observer) Wait(id string, t work.EventType) error {
	o.mu.Lock()
	en := o.entry(key{id, t})
	o.mu.Unlock()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case <-en.ch:
		return nil
	case <-timer.C:
		return fmt.Errorf("eventwait: no %s event for work %s after %v", t, id, Timeout)
	}
}

func (o *Observer) entry(k key) *entry {
	en := o.seen[k]
	if en == nil {
		en = &entry{ch: make(chan struct{})}
		o.seen[k] = en
	}
	return en
}
