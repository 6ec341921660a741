package observe_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// terminals is an Observer of its own: it counts the Works that ended, by
// state. Embedding NopObserver gives it Begin and Bind.
type terminals struct {
	observe.NopObserver
	mu     sync.Mutex
	counts map[observe.State]int
	done   chan struct{} // receives one value per terminal event
}

func (o *terminals) Event(_ context.Context, e observe.Event) {
	if !e.To.Terminal() {
		return
	}
	o.mu.Lock()
	o.counts[e.To]++
	o.mu.Unlock()
	o.done <- struct{}{}
}

// An Observer of your own receives every lifecycle event; none carries
// the child's input or output.
func Example() {
	obs := &terminals{counts: map[observe.State]int{}, done: make(chan struct{}, 2)}
	eng := work.New(work.WithObserver(obs))
	defer eng.Close(context.Background())
	owner := work.NewOwner("coordinator")
	for _, fail := range []bool{false, true} {
		_, err := eng.Start(context.Background(), work.Spec{Owner: owner,
			Target: work.Target{Label: "job", Kind: work.KindFunction},
			Run: func(context.Context) (string, error) {
				if fail {
					return "", fmt.Errorf("no luck")
				}
				return "done", nil
			}})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	for range 2 {
		select {
		case <-obs.done:
		case <-time.After(10 * time.Second):
			fmt.Println("no terminal event")
			return
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	fmt.Println(obs.counts[work.StateCompleted], "completed,", obs.counts[work.StateFailed], "failed")
	// Output: 1 completed, 1 failed
}
