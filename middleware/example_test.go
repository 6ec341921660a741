package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// workID returns the id of a work.ref.
func workID(ref string) string {
	var r struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(ref), &r)
	return r.ID
}

func ExamplePrepare() {
	sup := work.New()
	defer sup.Close(context.Background())

	research := middleware.Child{
		Description: "Researches a topic and reports its findings.",
		Kind:        work.KindAgent,
		Run: func(ctx context.Context, topic string) (string, error) {
			return "findings about " + topic, nil
		},
	}
	summarize := middleware.Child{
		Description: "Summarizes a text.",
		Kind:        work.KindFunction,
		Run: func(ctx context.Context, text string) (string, error) {
			return "summary of " + text, nil
		},
	}

	// One backgroundable child: the work tool is added, once, last.
	set, err := middleware.Prepare(sup, work.NewOwner("coordinator"), map[string]any{
		"search":    &plainTool{name: "search"}, // an ordinary tool: passed through
		"summarize": summarize,                  // a foreground child
		"research":  middleware.Backgroundable(research),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range set.Tools() {
		fmt.Println(t.Name())
	}
	fmt.Println("work tool added:", set.HasWork())

	// No backgroundable child: no work tool.
	plain, _ := middleware.Prepare(sup, work.NewOwner("helper"), map[string]any{"summarize": summarize})
	fmt.Println("work tool added:", plain.HasWork())

	// An authored tool named "work" is a preparation error.
	_, err = middleware.Prepare(sup, work.NewOwner("coordinator"), map[string]any{
		"research": middleware.Backgroundable(research),
		"work":     &plainTool{name: "work"},
	})
	fmt.Println(err)
	// Output:
	// research
	// search
	// summarize
	// work
	// work tool added: true
	// work tool added: false
	// middleware: an authored tool is named "work", which collides with the automatic "work" tool
}

func ExampleBackgroundable() {
	sup := work.New()
	defer sup.Close(context.Background())

	release := make(chan struct{})
	research := middleware.Backgroundable(middleware.Child{
		ID:          "researcher-v1",
		Description: "Researches a topic.",
		Kind:        work.KindAgent,
		Run: func(ctx context.Context, topic string) (string, error) {
			<-release
			return "Findings about " + topic + ".", nil
		},
	})
	set, _ := middleware.Prepare(sup, work.NewOwner("coordinator"), map[string]any{"research": research})
	tools := set.Tools() // research, work
	ctx := context.Background()

	// The launch returns the Ref at once, while the child is still waiting.
	ref, _ := tools[0].Call(ctx, `{"input":"Go generics","run_in_background":true}`)
	id := workID(ref)
	fmt.Println(strings.ReplaceAll(ref, id, "<id>"))

	close(release)
	out, _ := tools[1].Call(ctx, `{"action":"result","id":"`+id+`","timeout":"10s"}`)
	fmt.Println(out)
	// Output:
	// {"kind":"work.ref","id":"<id>","targetId":"researcher-v1","guarantees":{"execution":"process-local","rejoin":"process-local"}}
	// Findings about Go generics.
}

// The block lists at most 12 rows in priority order (results not yet
// read, failed, running, queued, then the rest), newest first within each.
// Ids are random, so this example prints <id1>, <id2>... in launch order
// where the block has each Work's 32-digit id.
func ExampleKit_StatusBlock() {
	clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sup := work.New(work.WithClock(clock), work.WithMaxRunning(1), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	defer sup.Close(context.Background())

	release, hold := make(chan struct{}), make(chan struct{})
	defer close(hold)
	child := func(ctx context.Context, in string) (string, error) {
		select {
		case <-hold:
			return "done: " + in, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	set, _ := middleware.Prepare(sup, work.NewOwner("coordinator"), map[string]any{
		"summarize": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
			<-release
			return "summary", nil
		}}),
		"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: child}),
		"fetch":    middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: child}),
	})
	tools := map[string]middleware.Tool{}
	for _, t := range set.Tools() {
		tools[t.Name()] = t
	}
	ctx := context.Background()
	start := func(label string) string {
		ref, _ := tools[label].Call(ctx, `{"input":"x","run_in_background":true}`)
		return workID(ref)
	}

	fmt.Printf("no work: %q\n", set.StatusBlock(ctx))

	id1 := start("summarize")
	clock.Advance(2 * time.Second)
	close(release)
	// result waits until the child completes.
	out, _ := tools["work"].Call(ctx, `{"action":"result","id":"`+id1+`"}`)
	fmt.Println(out)

	id2 := start("research") // runs
	clock.Advance(5 * time.Second)
	id3 := start("fetch") // queued: one Work runs at a time here
	clock.Advance(time.Minute)

	block := set.StatusBlock(ctx)
	fmt.Println(strings.NewReplacer(id1, "<id1>", id2, "<id2>", id3, "<id3>").Replace(block))
	// Output:
	// no work: ""
	// summary
	// [background work] id | target | state | elapsed | result
	// <id2> | research | running | 1m5s | none
	// <id3> | fetch | queued | 1m0s | none
	// <id1> | summarize | completed | 2s | available
	// (read results with the work tool's result action; status never includes output)
}
