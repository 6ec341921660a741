package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// Breaks are the deliberately broken builds of a coordinator process
// (its -break flag), each breaking one thing a chaos check watches, so
// that a driver sees that check fail:
//
//   - BreakGoError: a work tool or launch answer that is the error
//     object of an unavailable engine is returned as a Go error instead
//     (an adapter that lets the engine's error abort the executor);
//   - BreakNoBound: model-facing calls run without the caller's bound
//     (the runner's driver also lifts its RPC timeout);
//   - BreakDropNotice: the first settlement notice is dropped;
//   - BreakSkipAdmission: a launch answers a work.ref without starting
//     anything (an admission lost on the way).
const (
	BreakGoError       = "go-error"
	BreakNoBound       = "no-bound"
	BreakDropNotice    = "drop-notice"
	BreakSkipAdmission = "skip-admission"
)

// Model is a coordinator process's model-facing side, for chaos drivers:
// one owner's tools prepared by the middleware on an engine (each label a
// backgroundable child whose Run is never called in this process), the
// status block, and the owner's settlement notices from a Subscription
// kept from NewModel to Close. Its commands (Command) answer what the
// model would read. It is safe for concurrent use.
type Model struct {
	set   *middleware.Kit
	tools map[string]middleware.Tool
	bound time.Duration
	brk   string
	sub   *work.Subscription
	done  chan struct{}

	mu       sync.Mutex
	settled  map[string]int // work id -> settlement notices
	approval map[string]int
	dropped  bool
}

// NewModel prepares the tools of labels (label -> kind) for o on e,
// subscribes to o's notices (ctx bounds both), and answers each model
// call within bound (the caller's context of each call).
func NewModel(ctx context.Context, e *work.Engine, o work.Owner, labels map[string]observe.Kind, bound time.Duration, brk string) (*Model, error) {
	entries := map[string]any{}
	for label, kind := range labels {
		entries[label] = middleware.Backgroundable(middleware.Child{Kind: kind, Description: label,
			Run: func(context.Context, string) (string, error) { return "", errors.New("runs on a worker") }})
	}
	set, err := middleware.PrepareContext(ctx, e, o, entries)
	if err != nil {
		return nil, err
	}
	sub, err := e.Subscribe(ctx, o, 1024)
	if err != nil {
		return nil, err
	}
	m := &Model{set: set, tools: map[string]middleware.Tool{}, bound: bound, brk: brk, sub: sub,
		done: make(chan struct{}), settled: map[string]int{}, approval: map[string]int{}}
	for _, t := range set.Tools() {
		m.tools[t.Name()] = t
	}
	go m.listen()
	return m, nil
}

func (m *Model) listen() {
	defer close(m.done)
	for n := range m.sub.C() {
		m.mu.Lock()
		switch {
		case n.Kind == work.NoticeApproval:
			m.approval[n.WorkID]++
		case n.Kind == work.NoticeSettled && m.brk == BreakDropNotice && !m.dropped:
			m.dropped = true
		case n.Kind == work.NoticeSettled:
			m.settled[n.WorkID]++
		}
		m.mu.Unlock()
	}
}

// Close ends the Subscription.
func (m *Model) Close() {
	m.sub.Close()
	<-m.done
}

// Answer is a model call's answer as Command returns it: the string the
// model reads, or the Go error the tool returned, and how long it took.
type Answer struct {
	Answer string `json:"answer"`
	GoErr  string `json:"goErr,omitempty"`
	Ms     int64  `json:"ms"`
}

// Notices are the notices received so far: settlement and approval
// notices by Work id.
type Notices struct {
	Settled  map[string]int `json:"settled"`
	Approval map[string]int `json:"approval"`
}

// Command answers the model-facing commands, ok false for any other:
//
//	tool CALLID JSON          the work tool's answer to JSON (an Answer)
//	launch LABEL CALLID INPUT the child LABEL launched in the background (an Answer)
//	block                     the status block ({"block": ..., "ms": ...})
//	notices                   the notices so far (Notices)
//	calls JSON                the commands of JSON (an array of word
//	                          arrays) run at once, their answers in order
func (m *Model) Command(f []string) (any, bool, error) {
	switch f[0] {
	case "calls":
		var cmds [][]string
		if err := json.Unmarshal([]byte(strings.Join(f[1:], " ")), &cmds); err != nil {
			return nil, true, driver.Detail(work.ErrInvalidSpec, "calls: not a JSON array of word arrays")
		}
		out := make([]any, len(cmds))
		var wg sync.WaitGroup
		for i, c := range cmds {
			if len(c) == 0 || c[0] == "calls" {
				return nil, true, driver.Detail(work.ErrInvalidSpec, "calls: an empty or nested command")
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], _, _ = m.Command(c)
			}()
		}
		wg.Wait()
		return out, true, nil
	case "tool":
		return m.call("work", Arg(f, 1), Arg(f, 2)), true, nil
	case "launch":
		in, _ := json.Marshal(map[string]any{"input": Arg(f, 3), "run_in_background": true})
		if m.brk == BreakSkipAdmission {
			ref, _ := json.Marshal(map[string]any{"kind": "work.ref", "id": newID(), "targetId": Arg(f, 1)})
			return Answer{Answer: string(ref)}, true, nil
		}
		return m.call(Arg(f, 1), Arg(f, 2), string(in)), true, nil
	case "block":
		ctx, cancel := m.ctx()
		defer cancel()
		began := time.Now()
		b := m.set.StatusBlock(ctx)
		return map[string]any{"block": b, "ms": time.Since(began).Milliseconds()}, true, nil
	case "notices":
		m.mu.Lock()
		defer m.mu.Unlock()
		n := Notices{Settled: map[string]int{}, Approval: map[string]int{}}
		for k, v := range m.settled {
			n.Settled[k] = v
		}
		for k, v := range m.approval {
			n.Approval[k] = v
		}
		return n, true, nil
	}
	return nil, false, nil
}

func (m *Model) ctx() (context.Context, context.CancelFunc) {
	if m.brk == BreakNoBound {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), m.bound)
}

func (m *Model) call(tool, callID, input string) Answer {
	t, ok := m.tools[tool]
	if !ok {
		return Answer{GoErr: "no tool " + tool}
	}
	ctx, cancel := m.ctx()
	defer cancel()
	began := time.Now()
	out, err := t.Call(middleware.WithCallID(ctx, callID), input)
	a := Answer{Answer: out, Ms: time.Since(began).Milliseconds()}
	if err != nil {
		a.GoErr = err.Error()
	}
	if m.brk == BreakGoError && (ModelCall{Answer: out}).Code() == work.ErrUnavailable.Code {
		a.Answer, a.GoErr = "", "engine unavailable"
	}
	return a
}

// newID is a Work id no engine issued (32 hex digits).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ServeModel serves a coordinator process's protocol (Serve) on stdin and
// stdout for owner o on e: the commands of a Model (NewModel with labels,
// bound and brk, prepared within a minute) first, then command's. It
// returns the process's exit code.
func ServeModel(log *slog.Logger, e *work.Engine, o work.Owner, labels map[string]observe.Kind, bound time.Duration, brk string, command func([]string) (any, error)) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	m, err := NewModel(ctx, e, o, labels, bound, brk)
	cancel()
	if err != nil {
		log.Error("model", "err", err)
		return 1
	}
	defer m.Close()
	return Serve(os.Stdin, os.Stdout, log, func(f []string) (any, error) {
		if r, ok, err := m.Command(f); ok {
			return r, err
		}
		return command(f)
	})
}
