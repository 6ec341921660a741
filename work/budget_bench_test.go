package work_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// BenchmarkBoundaryChecks is the budget work of one model request and one
// tool call at a child's boundary (BeginRequest, EndRequest,
// ToolCallsLeft, BeginToolCall), with limits that never run out.
func BenchmarkBoundaryChecks(b *testing.B) {
	s := work.New()
	defer s.Close(context.Background())
	huge := work.Budget{MaxTurns: 1 << 40, MaxToolCalls: 1 << 40, MaxTokens: 1 << 60}
	_, err := s.Call(context.Background(), work.Spec{Owner: work.NewOwner("bench"), Target: work.Target{Label: "c", Kind: work.KindAgent},
		Budget: huge, Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := ex.BeginRequest(); err != nil {
					b.Fatal(err)
				}
				ex.EndRequest(60, 40, true)
				if ex.ToolCallsLeft() != 0 {
					ex.BeginToolCall()
				}
			}
			return "", nil
		}})
	if err != nil {
		b.Fatal(err)
	}
}
