package restate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestGuidanceDroppedAfterUsage: guidance its child never took is dropped
// as a Work ends after the attempt's usage and before the terminal event,
// in the order the in-process engine reports them (usage as the run ends,
// then guidance-dropped in the terminal transition).
func TestGuidanceDroppedAfterUsage(t *testing.T) {
	rec := &enginetest.Recorder{}
	began, proceed := make(chan struct{}), make(chan struct{})
	agent := restate.Child{Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
		ex, ok := work.ExecutionFrom(ctx)
		if !ok {
			return "", errors.New("no Execution")
		}
		if _, err := ex.BeginRequest(); err != nil { // one turn: a usage to report
			return "", err
		}
		close(began)
		select {
		case <-proceed:
			return "done", nil // no boundary more: the guidance stays queued
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
	e := deployWith(t, map[string]restate.Child{"agent": agent}, nil, restate.WithOptions(work.WithObserver(rec)))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	o := work.NewOwner("dropped-" + newToken())
	ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "agent", Kind: work.KindAgent}, Input: "x",
		Run: func(ctx context.Context) (string, error) { return agent.Run(ctx, "x") }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-began:
	case <-ctx.Done():
		t.Fatal("the child never reached its boundary")
	}
	if _, err := e.Send(ctx, o, ref.ID, "call-1", "never taken"); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	if st, out, err := e.Result(ctx, o, ref.ID, 30*time.Second); err != nil || st.State != work.StateCompleted || out != "done" {
		t.Fatalf("Result = %s %q, %v", st.State, out, err)
	}
	var types []observe.EventType
	for ctx.Err() == nil {
		types = types[:0]
		for _, ev := range rec.Events() {
			if ev.WorkID == ref.ID {
				types = append(types, ev.Type)
			}
		}
		if slices.Contains(types, observe.EventType(work.StateCompleted)) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling the recorder, not synchronising
	}
	at := func(typ observe.EventType) int { return slices.Index(types, typ) }
	u, d, c := at(observe.EventUsage), at(observe.EventGuidanceDropped), at(observe.EventType(work.StateCompleted))
	if u < 0 || d < 0 || c < 0 || !(u < d && d < c) {
		t.Fatalf("events %v: want usage, then guidance-dropped, then completed", fmt.Sprint(types))
	}
}
