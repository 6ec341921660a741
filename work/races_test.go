package work_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// checkObs checks each Work's event stream as it is delivered: one
// terminal event, nothing but detached, result-read and orphaned after it.
type checkObs struct {
	work.NopObserver
	mu       sync.Mutex
	terminal map[string]bool
	errs     []string
}

func (c *checkObs) Event(_ context.Context, e work.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.WorkID == "" {
		return
	}
	if c.terminal[e.WorkID] {
		switch e.Type {
		case work.EventDetached, work.EventResultRead, work.EventOrphaned:
		default:
			c.errs = append(c.errs, fmt.Sprintf("%s: %s after the terminal event", e.WorkID, e.Type))
		}
	}
	if e.To.Terminal() {
		c.terminal[e.WorkID] = true
	}
}

func (c *checkObs) seen(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminal[id]
}

func TestConcurrentOperations(t *testing.T) {
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { reviewRound(t) })
	}
}

func reviewRound(t *testing.T) {
	ob := &checkObs{terminal: make(map[string]bool)}
	s := work.New(work.WithObserver(ob), work.WithMaxRunning(3), work.WithMaxOutstanding(1000),
		work.WithMaxStarts(0), work.WithRetention(1000, 0))
	ctx := context.Background()
	const owners, per = 4, 40
	var wg sync.WaitGroup
	var emu sync.Mutex
	var errs []string
	fail := func(f string, a ...any) {
		emu.Lock()
		errs = append(errs, fmt.Sprintf(f, a...))
		emu.Unlock()
	}
	for oi := range owners {
		o := work.NewOwner(fmt.Sprint("o", oi))
		for range per {
			kind := rand.IntN(6)
			d := time.Duration(rand.IntN(20)+1) * time.Millisecond
			run := func(ctx context.Context) (string, error) {
				switch kind {
				case 0:
					return "ok", nil
				case 1:
					return "", errors.New("x")
				case 2:
					panic("p")
				case 3:
					runtime.Goexit()
				case 4:
					<-ctx.Done()
					return "", ctx.Err()
				}
				t := time.NewTimer(time.Duration(rand.IntN(3)) * time.Millisecond)
				defer t.Stop()
				select {
				case <-t.C:
					return "late", nil
				case <-ctx.Done():
					return "", context.Cause(ctx)
				}
			}
			ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, MaxDuration: d, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			for w := range 1 + rand.IntN(3) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					switch op := rand.IntN(5); {
					case op == 0 && w == 0:
						_, _ = s.Cancel(o, ref.ID)
					case op == 1 && w == 0:
						_, _ = s.Detach(o, ref.ID)
					default:
						rctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(4))*time.Millisecond)
						defer cancel()
						timeout := []time.Duration{0, time.Millisecond, 3 * time.Millisecond, time.Second}[rand.IntN(4)]
						st, _, err := s.Result(rctx, o, ref.ID, timeout)
						if err == nil && st.State.Terminal() && !ob.seen(ref.ID) {
							fail("%s: Result reported %s before the Observer saw it", ref.ID, st.State)
						}
					}
				}()
			}
		}
	}
	wg.Wait()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ob.mu.Lock()
	errs = append(errs, ob.errs...)
	ob.mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
}
