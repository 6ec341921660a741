package langchaingo

import (
	"context"
	"errors"

	"github.com/tmc/langchaingo/chains"

	"github.com/agentwork/agentwork/middleware"
)

// DefaultMaxResumes bounds how often RunUntilSettled runs the coordinator
// again when no WithMaxResumes is given (middleware.DefaultMaxResumes).
const DefaultMaxResumes = middleware.DefaultMaxResumes

// NoticeHeader opens the user message RunUntilSettled resumes the
// coordinator with (middleware.NoticeHeader); one line per settled Work
// follows, for example
//
//	[background work notice] Background work settled:
//	background work 3f0c5a7e21d94b8c9e6f0a1b2c3d4e5f (research_web) completed: read it with the work tool's result action
//	background work 9a1b7c3d5e8f40a2b6c4d8e0f1a3b5c7 (fetch_dataset) failed: check it with the work tool's status action
//
// The message is content-free: ids, target labels and states only.
const NoticeHeader = middleware.NoticeHeader

// QuestionHeader opens the content-free notice RunUntilSettled resumes
// the coordinator with when a child that reports its updates
// (ReportUpdates) asked a question while its Work is live
// (middleware.QuestionHeader). The question itself is child content: it
// is only in the updates block (middleware.UpdatesBlock), a user message
// of its own.
const QuestionHeader = middleware.QuestionHeader

// SettleOption configures RunUntilSettled (middleware.SettleOption).
type SettleOption = middleware.SettleOption

// WithMaxResumes bounds the coordinator's runs after the first (default
// DefaultMaxResumes). Values below 0 are ignored; 0 never resumes.
func WithMaxResumes(n int) SettleOption { return middleware.WithMaxResumes(n) }

// WithOnAnswer calls fn with each run's answer as it ends (run 0 is the
// first), on the calling goroutine. A nil fn is ignored.
func WithOnAnswer(fn func(run int, answer string)) SettleOption { return middleware.WithOnAnswer(fn) }

// Settled reports what RunUntilSettled did (middleware.Settled).
type Settled = middleware.Settled

// RunUntilSettled runs the coordinator chain (normally the Executor built
// around the Kit's Tools and Model) with input and, whenever a run ends
// while the Kit's background Work is still live, waits for the next
// settlement and runs it again with a framed, content-free user message
// (NoticeHeader) naming each Work that settled since: completed with a
// result not yet read ("read it with the work tool's result action"), or
// failed without the coordinator having seen the failure in a status
// block ("check it with the work tool's status action"), also when it
// failed after the run's last model request. Work that was cancelled, and
// results the coordinator already read, bring no notice.
// Results reach the model only through the work tool, never in a notice.
//
// It returns when no Work of the Kit's owner is live and every settled
// Work has been announced, when the resume cap is hit (Capped), when ctx
// ends (with ctx's error), when a run fails (with its error), when the
// engine cannot read the owner's Work (Live's or Settled's error), or when the
// Kit's owner is released or the engine closed (its subscription
// closes, or the Kit is found released after a run; it then reads no more
// of the engine, where a later Kit may have the same owner id). Called
// after the Kit's Release it returns ErrReleased, on the zero Kit
// ErrNotPrepared, with a nil ctx ErrNilContext, all before it runs the
// chain. Each settled Work is announced exactly once, none missed, also
// when several settle together or while a run is in progress, and however
// many the owner has: a subscription (work.Engine.Subscribe) only
// wakes the helper, which then reads all of the owner's settled Works
// (work/boundary's Settled, not limited like List). A Work the owner's
// retention (work.WithRetention) evicts before it is announced is lost
// with its result. A notice of another kind (work.NoticeApproval) only
// wakes it: a Work awaiting approval is live, so it keeps waiting, up to
// the Work's approval timeout, until the application answers (approved, it
// runs and its settlement is announced; denied, it ends cancelled, which
// brings no notice).
//
// Children that report their updates to the coordinator (ReportUpdates)
// add two things. The updates accepted since the last resume (those the
// child's filter keeps) ride with the next resume, batched, as a user
// message of their own (middleware.UpdatesBlock: untrusted child content
// with each Work's id, target and sequence numbers) right after the
// resume's notice, in each request of that resumed run only: never in the
// notice, never in the status block, never in a request already sent. An
// update alone does not resume the coordinator; a question of a Work
// still live does, with a content-free notice of its own (QuestionHeader)
// that tells it to answer with the work tool's send action. A question
// of a Work already settled rides with the next resume like any update.
// Update notices (work.NoticeUpdate) only wake the helper, which then
// reads the updates by cursor (work.Engine.Updates).
//
// The chain gets the input under the key "input" and must have one string
// output. A chain with memory (one whose memory has variables, such as
// memory.NewConversationBuffer) keeps the conversation across runs and is
// resumed with the notice alone; a chain without memory (an Executor's
// default) remembers nothing of the first run, so it is resumed with the
// original input, a blank line and the notice.
//
// The loop, its notices and what it announces are
// middleware.Kit.RunUntilSettled's; this method only feeds the chain.
func (k *Kit) RunUntilSettled(ctx context.Context, chain chains.Chain, input string, opts ...SettleOption) (Settled, error) {
	switch {
	case k == nil || k.set == nil:
		return Settled{}, ErrNotPrepared
	case ctx == nil:
		return Settled{}, ErrNilContext
	case k.set.Released():
		return Settled{}, ErrReleased
	case chain == nil:
		return Settled{}, errors.New("langchaingo: RunUntilSettled: nil chain")
	}
	remembers := hasMemory(ctx, chain)
	res, err := k.set.RunUntilSettled(ctx, func(ctx context.Context, r middleware.Resume) (string, error) {
		in := input
		if r.Run > 0 {
			in = r.Notice
			if !remembers {
				in = input + "\n\n" + r.Notice
			}
		}
		if r.Updates != "" {
			// Handed over with this resume only: the run's requests carry
			// it, as a user message of its own after the notice.
			k.resume.Store(&resumeBlock{marker: r.Notice, block: r.Updates})
			defer k.resume.Store(nil)
		}
		return runChain(ctx, chain, in)
	}, opts...)
	if errors.Is(err, middleware.ErrReleased) {
		err = ErrReleased
	}
	return res, err
}

// hasMemory reports whether chain keeps the conversation between runs: a
// memory that loads no variables (memory.Simple, an Executor's default)
// does not.
func hasMemory(ctx context.Context, chain chains.Chain) bool {
	m := chain.GetMemory()
	return m != nil && len(m.MemoryVariables(ctx)) > 0
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
