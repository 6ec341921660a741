package work_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// BenchmarkSend measures one Send per verdict of its checks: accepted (a
// new command id each time, the mailbox drained every 32 messages), a
// repeated command (its first receipt), and each refusal after the
// owner's check (not an agent, conflict, terminal, full).
func BenchmarkSend(b *testing.B) {
	ctx := context.Background()
	o := work.NewOwner("bench")
	fnT := work.Target{Label: "f", Kind: work.KindFunction}
	agentT := work.Target{Label: "a", Kind: work.KindAgent}
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = "call-" + strconv.Itoa(i)
	}
	// running starts a child of target that waits until ctx ends and
	// returns its id and Execution.
	running := func(b *testing.B, s *work.Engine, target work.Target) (string, *work.Execution) {
		started := make(chan *work.Execution)
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: target, Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			started <- ex
			<-ctx.Done()
			return "", ctx.Err()
		}})
		if err != nil {
			b.Fatal(err)
		}
		return ref.ID, <-started
	}
	send := func(b *testing.B, s *work.Engine, id, cmd, text string, want error) {
		b.Helper()
		if _, err := s.Send(ctx, o, id, cmd, text); err != want && (want == nil || !isCode(err, want)) {
			b.Fatalf("Send = %v, want %v", err, want)
		}
	}
	b.Run("Accept", func(b *testing.B) {
		s := work.New()
		defer s.Close(ctx)
		id, ex := running(b, s, agentT)
		b.ReportAllocs()
		for i := range b.N {
			send(b, s, id, ids[i%len(ids)], "look at page 2", nil)
			if i%32 == 31 {
				boundary.Guidance(ex)
			}
		}
	})
	b.Run("Repeat", func(b *testing.B) {
		s := work.New()
		defer s.Close(ctx)
		id, _ := running(b, s, agentT)
		send(b, s, id, "call-1", "look at page 2", nil)
		b.ReportAllocs()
		for range b.N {
			send(b, s, id, "call-1", "look at page 2", nil)
		}
	})
	b.Run("Conflict", func(b *testing.B) {
		s := work.New()
		defer s.Close(ctx)
		id, _ := running(b, s, agentT)
		send(b, s, id, "call-1", "look at page 2", nil)
		b.ReportAllocs()
		for range b.N {
			send(b, s, id, "call-1", "look at page 3", work.ErrConflict)
		}
	})
	b.Run("NotAgent", func(b *testing.B) {
		s := work.New()
		defer s.Close(ctx)
		id, _ := running(b, s, fnT)
		b.ReportAllocs()
		for range b.N {
			send(b, s, id, "call-1", "look at page 2", work.ErrNotAgent)
		}
	})
	b.Run("Terminal", func(b *testing.B) {
		s := work.New()
		defer s.Close(ctx)
		ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agentT, Run: immediate("x")})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Result(ctx, o, ref.ID, time.Minute); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for range b.N {
			send(b, s, ref.ID, "call-1", "look at page 2", work.ErrTerminal)
		}
	})
	b.Run("Full", func(b *testing.B) {
		s := work.New(work.WithGuidanceQueue(1, 0))
		defer s.Close(ctx)
		id, _ := running(b, s, agentT)
		send(b, s, id, "", "look at page 2", nil)
		b.ReportAllocs()
		for range b.N {
			send(b, s, id, "", "look at page 3", work.ErrMailboxFull)
		}
	})
}

func isCode(err, want error) bool {
	we, ok := err.(*work.Error)
	return ok && we.Is(want)
}
