package langchaingo

import (
	"context"
	"errors"
	"strings"

	"github.com/tmc/langchaingo/chains"

	"github.com/agentwork/agentwork/work"
)

// DefaultMaxResumes bounds how often RunUntilSettled runs the coordinator
// again when no WithMaxResumes is given.
const DefaultMaxResumes = 8

// NoticeHeader opens the user message RunUntilSettled resumes the
// coordinator with; one line per settled Work follows, for example
//
//	[background work notice] Background work settled:
//	background work 3f0c... (research_web) completed: read it with the work tool's result action
//	background work 9a1b... (fetch_dataset) failed: check it with the work tool's status action
//
// The message is content-free: ids, target labels and states only.
const NoticeHeader = "[background work notice] Background work settled:"

// SettleOption configures RunUntilSettled.
type SettleOption interface{ apply(*settleConfig) }

type settleConfig struct {
	maxResumes int
	onAnswer   func(run int, answer string)
}

type settleOptionFunc func(*settleConfig)

func (f settleOptionFunc) apply(c *settleConfig) { f(c) }

// WithMaxResumes bounds the coordinator's runs after the first (default
// DefaultMaxResumes). Values below 0 are ignored; 0 never resumes.
func WithMaxResumes(n int) SettleOption {
	return settleOptionFunc(func(c *settleConfig) {
		if n >= 0 {
			c.maxResumes = n
		}
	})
}

// WithOnAnswer calls fn with each run's answer as it ends (run 0 is the
// first), on the calling goroutine. A nil fn is ignored.
func WithOnAnswer(fn func(run int, answer string)) SettleOption {
	return settleOptionFunc(func(c *settleConfig) {
		if fn != nil {
			c.onAnswer = fn
		}
	})
}

// Settled reports what RunUntilSettled did.
type Settled struct {
	Answers []string // each run's answer, the first run's first
	Resumes int      // runs after the first
	Notices int      // settled Works the coordinator was told about
	// Capped reports that the resume cap stopped the loop while the Kit's
	// Work was still live or had settled unannounced.
	Capped bool
}

// Answer returns the last run's answer, or "".
func (s Settled) Answer() string {
	if len(s.Answers) == 0 {
		return ""
	}
	return s.Answers[len(s.Answers)-1]
}

// RunUntilSettled runs the coordinator chain (normally the Executor built
// around the Kit's Tools and Model) with input and, whenever a run ends
// while the Kit's background Work is still live, waits for the next
// settlement and runs it again with a framed, content-free user message
// (NoticeHeader) naming each Work that settled since: completed with a
// result not yet read ("read it with the work tool's result action"), or
// failed after a run had ended ("check it with the work tool's status
// action"; a failure during a run is already in the status block the
// coordinator sees). Work that was cancelled, and results the coordinator
// already read, bring no notice.
// Results reach the model only through the work tool, never in a notice.
//
// It returns when no Work of the Kit's owner is live and every settled
// Work has been announced, when the resume cap is hit (Capped), when ctx
// ends (with ctx's error), when a run fails (with its error), or when the
// Kit's owner is released or the Supervisor closed (its subscription
// closes). Each settled Work is announced at most once, also when several
// settle together or while a run is in progress; none is missed: a
// subscription (work.Supervisor.Subscribe) only wakes the helper, which
// then reads the owner's state (List, so at most the 50 Works it shows).
//
// The chain gets the input under the key "input" and must have one string
// output. Its memory, if any, keeps the conversation across runs.
func (k *Kit) RunUntilSettled(ctx context.Context, chain chains.Chain, input string, opts ...SettleOption) (Settled, error) {
	cfg := settleConfig{maxResumes: DefaultMaxResumes}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	var res Settled
	if chain == nil {
		return res, errors.New("langchaingo: RunUntilSettled: nil chain")
	}
	owner := k.Owner()
	sub, err := k.sup.Subscribe(owner, 0)
	if err != nil {
		return res, err
	}
	defer sub.Close()
	announced := make(map[string]bool)
	watched := make(map[string]bool) // seen live between runs
	for run := 0; ; run++ {
		answer, err := runChain(ctx, chain, input)
		if err != nil {
			return res, err
		}
		res.Answers = append(res.Answers, answer)
		if cfg.onAnswer != nil {
			cfg.onAnswer(run, answer)
		}
		var due []work.Status
		for {
			drain(sub.C())
			list, err := k.sup.List(owner)
			if err != nil {
				return res, err
			}
			var live bool
			due, live = pending(list, announced, watched)
			if len(due) > 0 || !live {
				break
			}
			if res.Resumes >= cfg.maxResumes {
				res.Capped = true
				return res, nil
			}
			select {
			case _, ok := <-sub.C():
				if !ok {
					return res, nil // released or closed
				}
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if len(due) == 0 {
			return res, nil
		}
		if res.Resumes >= cfg.maxResumes {
			res.Capped = true
			return res, nil
		}
		for _, st := range due {
			announced[st.Work.ID] = true
		}
		res.Resumes++
		res.Notices += len(due)
		input = noticeMessage(due)
	}
}

// pending returns the settled Works of list not yet announced that need a
// notice (completed with an unread result, or failed after it was seen
// live between runs), oldest first, and whether any Work is still live.
// It marks the live Works as watched.
func pending(list []work.Status, announced, watched map[string]bool) (due []work.Status, live bool) {
	for i := len(list) - 1; i >= 0; i-- { // List is newest first
		st := list[i]
		switch {
		case !st.State.Terminal():
			live = true
			watched[st.Work.ID] = true
		case announced[st.Work.ID]:
		case st.State == work.StateCompleted && st.ResultAvailable && !st.ResultRead,
			st.State == work.StateFailed && watched[st.Work.ID]:
			due = append(due, st)
		}
	}
	return due, live
}

func noticeMessage(due []work.Status) string {
	var b strings.Builder
	b.WriteString(NoticeHeader)
	for _, st := range due {
		b.WriteString("\nbackground work " + st.Work.ID + " (" + st.TargetLabel + ") ")
		if st.State == work.StateFailed {
			b.WriteString("failed: check it with the work tool's status action")
		} else {
			b.WriteString("completed: read it with the work tool's result action")
		}
	}
	return b.String()
}

func drain(ch <-chan work.Notice) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// runChain runs chain with input under "input" and returns its one string
// output.
func runChain(ctx context.Context, chain chains.Chain, input string) (string, error) {
	out, err := chains.Call(ctx, chain, map[string]any{"input": input})
	if err != nil {
		return "", err
	}
	for _, key := range chain.GetOutputKeys() {
		if s, ok := out[key].(string); ok {
			return s, nil
		}
	}
	return "", errors.New("langchaingo: the chain returned no string output")
}
