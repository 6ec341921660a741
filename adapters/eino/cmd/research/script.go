package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/agentwork/agentwork/adapters/eino/scripted"
)

// gate holds the researchers in their read_sources tool until the
// coordinator has steered and cancelled them, so that the scripted run is
// the same every time (no sleeps).
type gate struct {
	entered chan struct{} // one send per researcher entering
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 2), release: make(chan struct{})} }

func (g *gate) tool() tool.InvokableTool {
	t, _ := utils.InferTool("read_sources", "Reads the sources on the topic.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-g.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "three sources read", nil
	})
	return t
}

// demoScript returns the coordinator's and the researchers' scripted
// models.
func demoScript(g *gate) (coord, child model.ToolCallingChatModel) {
	var goID, rustID string
	ids := func(r scripted.Request) {
		for _, m := range r.Messages {
			var ref struct{ Kind, ID, TargetID string }
			if json.Unmarshal([]byte(m.Text), &ref) == nil && ref.Kind == "work.ref" {
				switch ref.TargetID {
				case "research_go":
					goID = ref.ID
				case "research_rust":
					rustID = ref.ID
				}
			}
		}
	}
	work := func(args string) scripted.Step { return scripted.Call("work", args) }
	c := scripted.New(
		scripted.Calls(
			scripted.ToolCall{Name: "research_go", Arguments: `{"input":"history of Go","run_in_background":true}`},
			scripted.ToolCall{Name: "research_rust", Arguments: `{"input":"history of Rust","run_in_background":true}`},
			scripted.ToolCall{Name: "fetch_dataset", Arguments: `{"input":"language-adoption","run_in_background":true}`},
		),
		scripted.Func(func(r scripted.Request) scripted.Step {
			ids(r)
			<-g.entered
			<-g.entered // both researchers are reading their sources
			return scripted.Call("clock", `{}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return work(`{"action":"send","id":"` + goID + `","message":"Focus on the 2009 announcement."}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return work(`{"action":"cancel","id":"` + rustID + `"}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			close(g.release)
			return work(`{"action":"result","id":"` + goID + `","timeout":"10s"}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return work(`{"action":"result","id":"` + rustID + `","timeout":"10s"}`)
		}),
		work(`{"action":"list"}`),
		scripted.Text("Go was announced in 2009 (researched in the background, steered to the announcement); the Rust research was cancelled; the adoption dataset has 1,204 rows."),
	)
	researcher := scripted.New(
		scripted.Call("read_sources", `{}`),
		scripted.Func(func(r scripted.Request) scripted.Step {
			if len(r.Messages) > 0 && contains(r.Text(), "[supervisor guidance]") {
				return scripted.Text("Go was announced by Google in November 2009, following the guidance to focus on the announcement.")
			}
			return scripted.Text("Go appeared in 2009.")
		}),
	)
	rust := scripted.New(scripted.Call("read_sources", `{}`), scripted.Text("Rust 1.0 shipped in 2015."))
	return c, scripted.NewRouter(
		scripted.When(scripted.HumanContains("Rust"), rust),
		scripted.When(scripted.Otherwise(), researcher),
	)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
