package eino

import (
	"context"
	"errors"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/middleware"
)

// Settled reports what RunUntilSettled did (middleware.Settled).
type Settled = middleware.Settled

// SettleOption configures RunUntilSettled (middleware.SettleOption:
// middleware.WithMaxResumes, middleware.WithOnAnswer).
type SettleOption = middleware.SettleOption

// RunUntilSettled runs agent (the coordinator whose Handlers hold m) with
// input and, whenever a run ends while m's background Work is still live,
// waits for the next settlement and runs it again with the conversation
// so far (the input, each run's answer) and a content-free notice naming
// the Work that settled (middleware.NoticeHeader, QuestionHeader): the
// loop, its notices and what it announces are
// middleware.Kit.RunUntilSettled's. Child updates handed over with a
// resume (ReportUpdates) are a user message of their own after the
// notice, in that run only. Results reach the model only through the work
// tool.
//
// It returns ErrNotPrepared for a Middleware without an engine,
// ErrNilContext for a nil ctx and ErrReleased after Release, before any
// run; a run that fails ends it with the run's error.
func (m *Middleware) RunUntilSettled(ctx context.Context, agent adk.Agent, input string, opts ...SettleOption) (Settled, error) {
	switch {
	case m == nil || m.sup == nil:
		return Settled{}, ErrNotPrepared
	case ctx == nil:
		return Settled{}, ErrNilContext
	case agent == nil || isNil(agent):
		return Settled{}, errors.New("eino: RunUntilSettled: nil agent")
	}
	m.mu.Lock()
	base, err := m.baseLocked(ctx)
	m.mu.Unlock()
	if err != nil {
		return Settled{}, err
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	history := []adk.Message{schema.UserMessage(input)}
	res, err := base.RunUntilSettled(ctx, func(ctx context.Context, r middleware.Resume) (string, error) {
		if r.Run > 0 {
			history = append(history, schema.UserMessage(r.Notice))
		}
		msgs := history
		if r.Updates != "" {
			msgs = append(history[:len(history):len(history)], schema.UserMessage(r.Updates))
		}
		answer, err := collect(runner.Run(ctx, msgs))
		if err != nil {
			return "", err
		}
		history = append(history, schema.AssistantMessage(answer, nil))
		return answer, nil
	}, opts...)
	if errors.Is(err, middleware.ErrReleased) {
		err = ErrReleased
	}
	return res, err
}

// collect reads an agent run's events: the text of its last assistant
// message without tool calls, or its error.
func collect(iter *adk.AsyncIterator[*adk.AgentEvent]) (string, error) {
	var out string
	var runErr error
	for {
		ev, ok := iter.Next()
		if !ok {
			return out, runErr
		}
		if ev.Err != nil {
			runErr = ev.Err
			continue
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			runErr = err
			continue
		}
		if msg != nil && msg.Role == schema.Assistant && len(msg.ToolCalls) == 0 {
			out = msg.Content
		}
	}
}
