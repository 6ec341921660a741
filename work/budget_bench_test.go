package work_test

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
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
				if _, err := boundary.BeginRequest(ex); err != nil {
					b.Fatal(err)
				}
				boundary.EndRequest(ex, 60, 40, true)
				if boundary.ToolCallsLeft(ex) != 0 {
					boundary.BeginToolCall(ex)
				}
			}
			return "", nil
		}})
	if err != nil {
		b.Fatal(err)
	}
}
