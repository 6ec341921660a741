package work

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// With the no-op Observer a settling Work's emission still carries its
// Subscription notices: a Result that finds the Work terminal while the
// notice is being sent (here: held up on the Subscription's lock) must
// wait for it, whatever its timeout, so that a terminal answer is never
// ahead of the notice. Result answers at once only when the Work's emit
// lock is free under the engine's lock.
func TestResultNotAheadOfNoticeNopObserver(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Second} {
		t.Run(timeout.String(), func(t *testing.T) {
			s := New()
			defer s.Close(context.Background())
			o := NewOwner("a")
			sub, err := s.Subscribe(t.Context(), o, 1)
			if err != nil {
				t.Fatal(err)
			}
			proceed := make(chan struct{})
			ref, err := s.Start(context.Background(), Spec{Owner: o, Target: Target{Label: "fetch", Kind: KindFunction},
				Run: func(context.Context) (string, error) { <-proceed; return "", errors.New("boom") }})
			if err != nil {
				t.Fatal(err)
			}
			sub.mu.Lock() // the notice's send waits here, its emission holding the emit lock
			close(proceed)
			for {
				st, err := s.Status(t.Context(), o, ref.ID)
				if err != nil {
					t.Fatal(err)
				}
				if st.State.Terminal() {
					break
				}
				runtime.Gosched()
			}
			res := make(chan observe.State, 1)
			go func() {
				st, _, _ := s.Result(context.Background(), o, ref.ID, timeout)
				res <- st.State
			}()
			select {
			case st := <-res:
				sub.mu.Unlock()
				t.Fatalf("Result reported %s while the notice was still being sent", st)
			case <-time.After(100 * time.Millisecond): // Result rightly waits
			}
			sub.mu.Unlock()
			if st := <-res; st != StateFailed {
				t.Fatalf("Result = %s", st)
			}
			select {
			case n := <-sub.C():
				if n.WorkID != ref.ID {
					t.Fatalf("notice = %+v", n)
				}
			default:
				t.Fatal("Result returned a terminal answer before the notice was sent")
			}
		})
	}
}
