package middleware_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// benchSet prepares one owner with a backgroundable function child that
// returns at once.
func benchSet(b *testing.B) (*work.Engine, *middleware.Kit, middleware.Tool, middleware.Tool) {
	b.Helper()
	sup := work.New(work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0), work.WithRetention(100, 0))
	b.Cleanup(func() { _ = sup.Close(context.Background()) })
	set, err := middleware.Prepare(sup, work.NewOwner("bench"), map[string]any{
		"fn": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction,
			Run: func(context.Context, string) (string, error) { return "ok", nil }}),
	})
	if err != nil {
		b.Fatal(err)
	}
	tools := set.Tools()
	return sup, set, tools[0], tools[1]
}

// BenchmarkLaunchAndResult is the middleware's path through the engine: a
// background launch, then the work tool's result action until completed.
func BenchmarkLaunchAndResult(b *testing.B) {
	_, _, fn, wt := benchSet(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ref, _ := fn.Call(ctx, `{"input":"x","run_in_background":true}`)
		id := ref[len(`{"kind":"work.ref","id":"`):][:32]
		if out, _ := wt.Call(ctx, `{"action":"result","id":"`+id+`"}`); out != "ok" {
			b.Fatalf("result: %s (launch %s)", out, ref)
		}
	}
}

// BenchmarkStatusAction is the work tool's status action and the boundary
// status block over one owner's Work.
func BenchmarkStatusAction(b *testing.B) {
	_, set, fn, wt := benchSet(b)
	ctx := context.Background()
	ref, _ := fn.Call(ctx, `{"input":"x","run_in_background":true}`)
	id := ref[len(`{"kind":"work.ref","id":"`):][:32]
	in := `{"action":"status","id":"` + id + `"}`
	b.ReportAllocs()
	for b.Loop() {
		_, _ = wt.Call(ctx, in)
		_ = set.StatusBlock(ctx)
	}
}

// BenchmarkAutoBackgroundCost is what the auto-background option costs a
// call that does not move: the same child (it returns at once) called
// without run_in_background as a plain foreground call (engine Call), and
// with a bound of a minute (a launch awaited with Result, its Work left
// completed and read), in one run.
func BenchmarkAutoBackgroundCost(b *testing.B) {
	sup := work.New(work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0), work.WithRetention(100, 0))
	b.Cleanup(func() { _ = sup.Close(context.Background()) })
	run := func(context.Context, string) (string, error) { return "ok", nil }
	set, err := middleware.Prepare(sup, work.NewOwner("bench"), map[string]any{
		"fg":   middleware.Child{Kind: work.KindFunction, Run: run},
		"auto": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: run, AutoBackground: &middleware.AutoBackground{After: time.Minute}}),
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, arm := range []string{"foreground", "auto"} {
		var tl middleware.Tool
		for _, t := range set.Tools() {
			if t.Name() == map[string]string{"foreground": "fg", "auto": "auto"}[arm] {
				tl = t
			}
		}
		b.Run(arm, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out, _ := tl.Call(ctx, `{"input":"x"}`); out != "ok" {
					b.Fatalf("%s: %s", arm, out)
				}
			}
		})
	}
}
