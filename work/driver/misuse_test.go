package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestMisusePortable: a Portable Init did not set up (zero, nil, or Init
// with a nil Store) answers every method that returns an error with
// work.ErrNotInitialized, and its Observer is observe.NopObserver
// (work.Engine: never nil): enginetest.ZeroEngine.
func TestMisusePortable(t *testing.T) {
	nilStore := new(driver.Portable)
	driver.Init(nilStore, nil, driver.Config{})
	for name, p := range map[string]*driver.Portable{"zero": new(driver.Portable), "nil": nil, "nil Store": nilStore} {
		t.Run(name, func(t *testing.T) { enginetest.ZeroEngine(t, driver.NewEngine(p)) })
	}
}

// TestMisuseZeroHelpers: the driver's types documented as ready in their
// zero value are, and the nil arguments its functions accept are
// answered, not a panic.
func TestMisuseZeroHelpers(t *testing.T) {
	ctx := t.Context()
	o := work.NewOwner("o")
	for _, tt := range []struct {
		name string
		f    func() error
		want error
	}{
		{"zero Life: Closed, Close, Subscribe after Close", func() error {
			var l driver.Life
			if l.Closed() {
				return errors.New("zero Life is closed")
			}
			if err := l.Close(ctx); err != nil {
				return err
			}
			if err := l.Close(ctx); err != nil {
				return err
			}
			_, err := l.Subscribe(ctx, o, 1, time.Second, func(context.Context) ([]driver.Record, error) { return nil, nil }, nil)
			return err
		}, work.ErrClosed},
		{"zero Life: Subscribe with a nil Reader", func() error {
			var l driver.Life
			defer l.Close(ctx)
			_, err := l.Subscribe(ctx, o, 1, time.Second, nil, nil)
			return err
		}, work.ErrUnavailable},
		{"zero Cache: Snapshot with a nil refresh", func() error {
			var c driver.Cache
			_, err := c.Snapshot(ctx, time.Second, nil)
			return err
		}, work.ErrUnavailable},
		{"zero Adrift: Stop, Wait", func() error {
			var d driver.Adrift
			d.Stop()
			d.Wait()
			d.Stop()
			return nil
		}, nil},
		{"zero Slots: Snapshot", func() error {
			var s driver.Slots
			_ = s.Snapshot(nil, 0)
			return nil
		}, nil},
		{"zero Held: Get, Remove", func() error {
			var h driver.Held[int]
			if _, ok := h.Get("x"); ok {
				return errors.New("zero Held found x")
			}
			h.Remove("x", 0)
			return nil
		}, nil},
		{"zero JobWait: Next", func() error {
			var w driver.JobWait
			if d := w.Next(work.Backoff{}); d <= 0 {
				return errors.New("zero JobWait's first delay is not positive")
			}
			return nil
		}, nil},
		{"nil Pool: Reserve", func() error {
			var p *driver.Pool
			_, _, short := p.Reserve([3]int64{1, 1, 1}, [3]int64{1, 1, 1}, false)
			if short != "" {
				return errors.New("nil Pool refused: " + short)
			}
			return nil
		}, nil},
		{"zero Mailbox: an empty mailbox", func() error {
			var m driver.Mailbox[string]
			if got := m.Take(3, func(s string) int { return len(s) }); len(got) != 0 {
				return errors.New("zero Mailbox took messages")
			}
			if got := m.Drop(); len(got) != 0 {
				return errors.New("zero Mailbox dropped messages")
			}
			if _, err := m.Check(work.KindAgent, false, "c", "d", 1, false, driver.MailboxLimits{Messages: 1, Bytes: 10, Commands: 1}); err != nil {
				return err
			}
			m.Accept("m", 1, "c", "d", time.Now(), "r", 1)
			if got := m.Take(3, func(s string) int { return len(s) }); len(got) != 1 {
				return errors.New("zero Mailbox lost the accepted message")
			}
			return nil
		}, nil},
		{"Pool.Settle with nil spent", func() error {
			p := driver.Pool{Limit: [3]int64{5, 5, 5}}
			_, held, short := p.Reserve([3]int64{1, 1, 1}, [3]int64{1, 1, 1}, false)
			if short != "" {
				return errors.New("Reserve refused: " + short)
			}
			p.Settle(held, nil) // usage unknown: charges the reservation in full
			if p.Used != held {
				return errors.New("Settle(nil spent) did not charge the reservation")
			}
			return nil
		}, nil},
		{"zero Common: Attempts, Resolve", func() error {
			var c driver.Common
			c.Resolve()
			_ = c.Attempts("x")
			return nil
		}, nil},
		{"record helpers over nil", func() error {
			_ = driver.List(nil)
			_, _ = driver.Rows(nil, time.Now())
			_ = driver.Settled(nil)
			_ = driver.Live(nil)
			_ = driver.AwaitingApproval(nil)
			_ = driver.Evict(nil, 3)
			_, err := driver.Find(nil, driver.NewID())
			return err
		}, work.ErrNotFound},
		{"Init(nil Portable)", func() error {
			var p *driver.Portable
			driver.Init(p, nil, driver.Config{})
			return p.Close(ctx)
		}, work.ErrNotInitialized},
		{"Watch(nil, nil)", func() error { driver.Watch(nil, nil)(); return nil }, nil},
		{"Refused with a nil Observer", func() error {
			driver.Refused(ctx, nil, work.Spec{Owner: o}, "r", "")
			return nil
		}, nil},
		{"TooDeep with a nil Observer", func() error {
			return driver.TooDeep(ctx, nil, work.Spec{Owner: o}, 0)
		}, work.ErrLimit},
		{"Await with a nil Job", func() error {
			out, _ := driver.Await(ctx, nil, nil)
			if out == "" {
				return errors.New("Await(nil Job) answered no outcome")
			}
			return nil
		}, nil},
		{"CancelJob with a nil Job", func() error { driver.CancelJob(ctx, nil, nil); return nil }, nil},
		{"Submit with a nil Job", func() error {
			_, class := driver.Submit(ctx, ctx, nil, "k", "in", 0)
			if class == "" {
				return errors.New("Submit(nil Job) succeeded")
			}
			return nil
		}, nil},
		{"ValidTarget with a nil Job", func() error {
			return driver.ValidTarget("x", work.KindFunction, false, nil)
		}, work.ErrInvalidSpec},
		{"NewHeldAttempt with a nil cut", func() error {
			a := driver.NewHeldAttempt[int]("x", 1, nil)
			a.Finish(1)
			<-a.Done()
			return nil
		}, nil},
		{"UpdateRefused with a nil Observer", func() error {
			_, _ = driver.UpdateRefused(nil, driver.Attempt{}, 0, false, observe.UpdateRefusedNotDeclared)
			return nil
		}, nil},
		{"Transition of a zero Event", func() error { _ = driver.Transition("", "", observe.Event{}); return nil }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			enginetest.NoHang(t, tt.name, func() { err = tt.f() })
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("%s = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}
