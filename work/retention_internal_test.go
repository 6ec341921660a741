package work

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// terminalIDs is an Observer that hands out the id of each Work that
// reaches a terminal state.
type terminalIDs struct {
	observe.NopObserver
	ch chan string
}

func (o terminalIDs) Event(_ context.Context, e observe.Event) {
	if e.To.Terminal() && e.Type == observe.EventType(e.To) {
		o.ch <- e.WorkID
	}
}

// TestEvictionClassCounts: through random completions, failures, reads,
// detaches and evictions, an owner's per-class counts always match its
// terminal list (eviction relies on them to pick its class).
func TestEvictionClassCounts(t *testing.T) {
	ctx := context.Background()
	obs := terminalIDs{ch: make(chan string, 1)}
	s := New(WithObserver(obs), WithRetention(5, 0), WithMaxStarts(0))
	defer s.Close(ctx)
	o := NewOwner("coord")
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []string
	check := func() {
		t.Helper()
		s.mu.Lock()
		defer s.mu.Unlock()
		os := s.owners[o.id]
		var want [contract.NumEvictRanks]int
		for it := os.terminal.front(); it != nil; it = it.next {
			want[it.evictClass()]++
		}
		if os.classes != want {
			t.Fatalf("class counts %v, the list holds %v", os.classes, want)
		}
	}
	for range 500 {
		switch k := rng.IntN(4); {
		case k <= 1:
			failed := k == 1
			ref, err := s.Start(ctx, Spec{Owner: o, Target: Target{Label: "f", Kind: KindFunction},
				Run: func(context.Context) (string, error) {
					if failed {
						return "", context.DeadlineExceeded
					}
					return "x", nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			<-obs.ch // terminal, unread
			ids = append(ids, ref.ID)
		case k == 2 && len(ids) > 0:
			s.Detach(ctx, o, ids[rng.IntN(len(ids))])
		case len(ids) > 0:
			s.Result(ctx, o, ids[rng.IntN(len(ids))], 0)
		}
		check()
	}
}
