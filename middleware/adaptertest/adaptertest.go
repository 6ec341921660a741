package adaptertest

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Adapter is what an adapter supplies to Run: how to build a coordinator
// agent of its framework. The suite makes the engine, the scripts, the
// children's bodies and the owners; the adapter only translates them into
// its framework's agents, tools and model.
type Adapter struct {
	// Name names the framework in failure messages.
	Name string
	// NewCoordinator builds one coordinator agent as cfg describes,
	// prepared with agentwork on cfg.Engine for owner cfg.Owner, and
	// registers nothing with t that outlives the test (the suite releases
	// the Coordinator itself). It returns a preparation error as the
	// adapter reports it (wrapping middleware's sentinels, for
	// errors.Is): either here, or, for an adapter that prepares when the
	// agent starts (a BeforeAgent hook), from the Coordinator's first Run;
	// in both cases before any model request.
	NewCoordinator func(t *testing.T, cfg Config) (Coordinator, error)
}

// Config describes one coordinator agent.
type Config struct {
	// Engine is the engine to prepare on (a *work.Engine on the
	// suite's fake clock).
	Engine *work.Engine
	// Owner is the coordinator's owner id, unique per Config (the
	// langchaingo adapter's WithOwner).
	Owner string
	// Instruction is the coordinator's system prompt; it must reach the
	// model as a system message of every coordinator request.
	Instruction string
	// Model is the coordinator's scripted model: wrap it in the
	// framework's model interface (see Script).
	Model *Script
	// Tools are the coordinator's tools, in order: ordinary tools, and
	// foreground or backgroundable children.
	Tools []Tool
	// MaxIterations is the most model requests one Run may make; the
	// agent must allow at least as many.
	MaxIterations int
}

// ToolKind says what a Tool is.
type ToolKind int

// The tool kinds.
const (
	// Plain is an ordinary tool: passed through untouched.
	Plain ToolKind = iota
	// Function is a function child (work.KindFunction): Func is its body.
	Function
	// Agent is an agent child (work.KindAgent): a real agent of the
	// framework, built from Agent.
	Agent
)

// Tool is one tool of a coordinator or of an agent child.
type Tool struct {
	Kind        ToolKind
	Name        string
	Description string
	// ID is a child's own id, reported as the work.ref's targetId
	// ("" means the name).
	ID string
	// Background marks a child backgroundable (middleware.Backgroundable).
	Background bool
	// AutoBackground, when positive, is a backgroundable child's bound
	// for moving a call made without run_in_background to the background
	// (middleware.Child.AutoBackground: the adapter's option for it);
	// BackgroundByDefault makes an absent run_in_background mean true
	// (middleware.Child.BackgroundByDefault). The suite sets them only on
	// backgroundable children; both are off elsewhere, as the crux
	// contract has them.
	AutoBackground      time.Duration
	BackgroundByDefault bool
	// Schema is a child's input object schema (nil: the child takes one
	// string, asked for as {"input": "..."}); for a Plain tool, the JSON
	// schema to declare (nil: the framework's default).
	Schema map[string]any
	// Func is a Plain tool's or a function child's body. A Plain tool
	// gets its arguments as the framework passes them.
	Func func(ctx context.Context, input string) (string, error)
	// Agent is an agent child's agent.
	Agent *AgentSpec
}

// AgentSpec is an agent child: an agent of the framework, on its own
// scripted model, with its own system prompt and Plain tools, built fresh
// (or reset) for each run and given the child's input as its user input;
// its final answer is the child's output, a model error fails the child.
// Its model must be wrapped for guidance and cooperative cancel (the
// adapter's child middleware).
type AgentSpec struct {
	Instruction string
	Model       *Script
	Tools       []Tool
}

// Coordinator is one prepared coordinator agent.
type Coordinator interface {
	// Run runs one turn of the agent on input until its final answer
	// (returned) or the error that ended it. ctx's values must reach the
	// agent's tools (the suite checks that they do not reach children).
	Run(ctx context.Context, input string) (string, error)
	// Release releases the agent's owner (Kit.Release or its equivalent).
	Release() error
}

// Run runs the suite against a.
func Run(t *testing.T, a Adapter) {
	if a.NewCoordinator == nil {
		t.Fatal("adaptertest: Adapter.NewCoordinator is nil")
	}
	s := &suite{a: a}
	for _, c := range s.cases() {
		t.Run(c.name, c.run)
	}
}

// Cases returns the names of the suite's cases (Run's subtests), in
// order, for a test that runs them against broken adapters.
func Cases() []string {
	var names []string
	for _, c := range (&suite{}).cases() {
		names = append(names, c.name)
	}
	return names
}

type suite struct{ a Adapter }

type namedCase struct {
	name string
	run  func(*testing.T)
}

func (s *suite) cases() []namedCase {
	return []namedCase{
		{"WorkRef", s.workRef},
		{"WorkToolOnce", s.workToolOnce},
		{"PrepareErrors", s.prepareErrors},
		{"Foreground", s.foreground},
		{"Projections", s.projections},
		{"ListOrder", s.listOrder},
		{"ResultWait", s.resultWait},
		{"Cancel", s.cancel},
		{"Detach", s.detach},
		{"Send", s.send},
		{"NotFound", s.notFound},
		{"StatusBlock", s.statusBlock},
		{"Isolation", s.isolation},
		{"Limits", s.limits},
		{"BadInput", s.badInput},
		{"AutoBackground", s.autoBackground},
		{"BackgroundDefault", s.backgroundDefault},
	}
}
