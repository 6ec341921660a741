package durabletest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// guard bounds every wait on something a test controls: it turns a hang
// into a failure and never sequences anything. A durable engine on a
// loaded machine under the race detector is slow; nothing here waits for
// it to pass.
const guard = 2 * time.Minute

// gate is a chat model whose every request waits for the test: the
// request's messages go out on reqs, the reply comes back on replies.
// A request whose context ends while it waits returns the context's
// error (a cancel reaching the child there).
type gate struct {
	reqs    chan []*schema.Message
	replies chan *schema.Message
	n       atomic.Int64 // requests made
}

var _ model.ToolCallingChatModel = (*gate)(nil)

func (g *gate) Generate(ctx context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	g.n.Add(1)
	msgs := make([]*schema.Message, len(in))
	for i, m := range in {
		cp := *m
		msgs[i] = &cp
	}
	select {
	case g.reqs <- msgs:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case m := <-g.replies:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *gate) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := g.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{m}), nil
}

func (g *gate) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return g, nil }

// Researcher is the agent child: an Eino ChatModelAgent with agentwork's
// child middleware on a model whose every request waits for the test,
// with two tools: lookup answers at once, hold waits until its context
// ends.
type Researcher struct {
	model   *gate
	holding chan struct{}
	child   *eino.Child
}

// Provider is the researcher's gen_ai.provider.name (eino.WithProvider).
const Provider = "durable.test"

// NewObserver returns a telemetry Observer whose spans rec records, for
// the worker and the engine of a runner.
func NewObserver(t *testing.T) (observe.Observer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	return obs, rec
}

// CheckProvider checks that every "invoke_agent researcher" span the
// runner started (one per Work) carries gen_ai.provider.name Provider:
// the coordinator's target info travelled with the Work to the process
// that reports its events.
func CheckProvider(t *testing.T, rec *tracetest.SpanRecorder) {
	t.Helper()
	n := 0
	for _, s := range rec.Started() {
		if s.Name() != "invoke_agent researcher" {
			continue
		}
		n++
		got := ""
		for _, a := range s.Attributes() {
			if a.Key == "gen_ai.provider.name" {
				got = a.Value.AsString()
			}
		}
		if got != Provider {
			t.Errorf("invoke_agent researcher: gen_ai.provider.name = %q, want %q", got, Provider)
		}
	}
	if n == 0 {
		t.Error("the runner started no invoke_agent researcher span")
	}
}

// Child returns the researcher as an agent child.
func (r *Researcher) Child() *eino.Child { return r.child }

// NewResearcher returns the agent child the tests run durably: register
// its Child's Run under the label "researcher" on the runner's worker.
func NewResearcher(t *testing.T) *Researcher {
	t.Helper()
	r := &Researcher{model: &gate{reqs: make(chan []*schema.Message), replies: make(chan *schema.Message)}, holding: make(chan struct{}, 1)}
	lookup, err := utils.InferTool("lookup", "Looks a fact up.", func(context.Context, struct{}) (string, error) { return "LOOKED-UP", nil })
	if err != nil {
		t.Fatal(err)
	}
	hold, err := utils.InferTool("hold", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		r.holding <- struct{}{}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(guard):
			return "", errors.New("hold: no cancel arrived")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "researcher", Description: "Researches a topic.", Instruction: "You research.",
		Model:       r.model,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{lookup, hold}}},
		Handlers:    []adk.ChatModelAgentMiddleware{eino.ChildMiddleware()},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.child = eino.FromAgent(agent, eino.WithProvider(Provider))
	if r.child.Kind() != work.KindAgent {
		t.Fatalf("the researcher is a %v child, want an agent child", r.child.Kind())
	}
	return r
}

// request waits for the child's next model request.
func (r *Researcher) request(t *testing.T) []*schema.Message {
	t.Helper()
	select {
	case msgs := <-r.model.reqs:
		return msgs
	case <-time.After(guard):
		t.Fatal("the child made no model request")
	}
	return nil
}

// reply answers the child's pending model request.
func (r *Researcher) reply(t *testing.T, m *schema.Message) {
	t.Helper()
	select {
	case r.model.replies <- m:
	case <-time.After(guard):
		t.Fatal("the child's model did not take its reply")
	}
}

func call(name string) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_" + name, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: "{}"}}})
}

// coordinator is an Eino ChatModelAgent with agentwork's middleware on
// eng, the researcher backgroundable among its tools; each turn's model
// reply is decided by the test (turn).
type coordinator struct {
	mw    *eino.Middleware
	agent adk.Agent
	next  chan func([]*schema.Message) *schema.Message
}

func newCoordinator(t *testing.T, eng *work.Engine, owner string, r *Researcher) *coordinator {
	t.Helper()
	c := &coordinator{mw: eino.New(eng, eino.WithOwner(owner)), next: make(chan func([]*schema.Message) *schema.Message, 2)}
	t.Cleanup(func() { _ = c.mw.Release() })
	agent, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "coordinator", Description: "Coordinates.", Instruction: "You coordinate.",
		Model:       funcModel(func(in []*schema.Message) *schema.Message { return (<-c.next)(in) }),
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{eino.Backgroundable(r.child)}}},
		Handlers:    []adk.ChatModelAgentMiddleware{c.mw},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.agent = agent
	return c
}

// turn runs one coordinator turn: its model calls tool with args, then
// answers; it returns the tool's result.
func (c *coordinator) turn(t *testing.T, tool string, args any) string {
	t.Helper()
	b, _ := json.Marshal(args)
	var result string
	c.next <- func([]*schema.Message) *schema.Message {
		return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_" + tool, Type: "function", Function: schema.FunctionCall{Name: tool, Arguments: string(b)}}})
	}
	c.next <- func(in []*schema.Message) *schema.Message {
		for i := len(in) - 1; i >= 0; i-- {
			if in[i].Role == schema.Tool {
				result = in[i].Content
				break
			}
		}
		return schema.AssistantMessage("turn done", nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: c.agent}).Run(ctx, []adk.Message{schema.UserMessage("Coordinate.")})
	for {
		ev, ok := iter.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			t.Fatalf("the coordinator's turn failed: %v", ev.Err)
		}
	}
	return result
}

// funcModel is a chat model answering with fn.
type funcModel func([]*schema.Message) *schema.Message

func (f funcModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	return f(in), nil
}

func (f funcModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, _ := f.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{m}), nil
}

func (f funcModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return f, nil }

// launch starts the researcher in the background on topic and returns
// the Work's id; the work.ref must say durable.
func (c *coordinator) launch(t *testing.T, topic string) string {
	t.Helper()
	out := c.turn(t, "researcher", map[string]any{"input": topic, "run_in_background": true})
	var ref struct {
		Kind, ID   string
		Guarantees struct{ Execution, Rejoin string }
	}
	if err := json.Unmarshal([]byte(out), &ref); err != nil || ref.Kind != "work.ref" {
		t.Fatalf("the launch answered %q, want a work.ref", out)
	}
	if ref.Guarantees.Execution != "durable" || ref.Guarantees.Rejoin != "durable" {
		t.Fatalf("the work.ref's guarantees are %+v, want durable", ref.Guarantees)
	}
	return ref.ID
}

// users returns the contents of msgs' user messages.
func users(msgs []*schema.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == schema.User {
			out = append(out, m.Content)
		}
	}
	return out
}

// Test runs the scenarios on eng, a durable engine whose workers run r
// under the label "researcher", with owners named after owner: the
// researcher launched by an Eino coordinator completes with the guidance
// the coordinator sent while it ran (guidance), and a cancel the
// coordinator sent stops it (cancel).
func Test(t *testing.T, r *Researcher, eng *work.Engine, owner string) {
	// The deployment's first answer can take long on a loaded machine
	// (a fresh server's first invocations): wait for it here, under the
	// guard, rather than in a coordinator's preparation probe.
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if _, err := eng.List(ctx, work.NewOwner(owner+"-ready")); err != nil {
		t.Fatalf("the engine does not answer: %v", err)
	}
	t.Run("guidance", func(t *testing.T) {
		c := newCoordinator(t, eng, owner+"-guidance", r)
		id := c.launch(t, "TOPIC-DURABLE")
		first := r.request(t)
		if got := users(first); len(got) != 1 || got[0] != "TOPIC-DURABLE" {
			t.Fatalf("the child's first request has user messages %q, want only its input", got)
		}
		receipt := c.turn(t, "work", map[string]string{"action": "send", "id": id, "message": "GUIDE-DURABLE"})
		if !strings.Contains(receipt, `"outcome":"accepted"`) {
			t.Fatalf("send answered %s, want an accepted receipt", receipt)
		}
		r.reply(t, call("lookup"))
		second := r.request(t)
		got := users(second)
		if len(got) != 2 || got[0] != "TOPIC-DURABLE" || !strings.Contains(got[1], "GUIDE-DURABLE") {
			t.Fatalf("the child's request after the send has user messages %q, want its input, then the guidance", got)
		}
		r.reply(t, schema.AssistantMessage("DURABLE-OUTPUT", nil))
		if out := c.turn(t, "work", map[string]string{"action": "result", "id": id, "timeout": "30s"}); out != "DURABLE-OUTPUT" {
			t.Fatalf("result answered %s, want the child's exact output", out)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		c := newCoordinator(t, eng, owner+"-cancel", r)
		id := c.launch(t, "TOPIC-CANCEL")
		r.request(t)
		r.reply(t, call("hold"))
		requests := r.model.n.Load()
		select {
		case <-r.holding:
		case <-time.After(guard):
			t.Fatal("the child's hold tool did not start")
		}
		receipt := c.turn(t, "work", map[string]string{"action": "cancel", "id": id})
		if !strings.Contains(receipt, `"accepted":true`) || !strings.Contains(receipt, `"state":"cancel-requested"`) {
			t.Fatalf("cancel answered %s, want accepted, cancel-requested", receipt)
		}
		var st string
		for range 4 { // each result waits at most 30 s
			var p struct{ State string }
			out := c.turn(t, "work", map[string]string{"action": "result", "id": id, "timeout": "30s"})
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("result answered %s, want the status projection", out)
			}
			if st = p.State; st != "cancel-requested" {
				break
			}
		}
		if st != "cancelled" {
			t.Fatalf("the cancelled child ended %q, want cancelled", st)
		}
		if n := r.model.n.Load(); n != requests {
			t.Fatalf("the cancelled child made %d more model requests", n-requests)
		}
	})
}
