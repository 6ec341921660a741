package driver

import (
	"sync"

	"github.com/agentwork/agentwork/work/observe"
)

// Watching is a Worker's watch by its Observer, from its Start to its
// Stop. Its zero value watches nothing; it is safe for concurrent use.
type Watching struct {
	mu  sync.Mutex
	end func()
}

// Start has o watch w (Watch) until Stop.
func (x *Watching) Start(o observe.Observer, w observe.Watched) {
	end := Watch(o, w)
	x.mu.Lock()
	x.end = end
	x.mu.Unlock()
}

// Stop ends the watch Start began; with none (never started, or stopped
// already) it does nothing.
func (x *Watching) Stop() {
	x.mu.Lock()
	end := x.end
	x.end = nil
	x.mu.Unlock()
	if end != nil {
		end()
	}
}
