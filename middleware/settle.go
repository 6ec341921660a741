package middleware

import (
	"context"
	"strings"
	"sync"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// DefaultMaxResumes bounds how often RunUntilSettled runs the coordinator
// again when no WithMaxResumes is given.
const DefaultMaxResumes = 8

// NoticeHeader opens the user message RunUntilSettled resumes the
// coordinator with (Resume.Notice); one line per settled Work follows, for example
//
//	[background work notice] Background work settled:
//	background work 3f0c5a7e21d94b8c9e6f0a1b2c3d4e5f (research_web) completed: read it with the work tool's result action
//	background work 9a1b7c3d5e8f40a2b6c4d8e0f1a3b5c7 (fetch_dataset) failed: check it with the work tool's status action
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
	// Updates counts the child updates handed to the coordinator
	// (ReportUpdates), Questions the resumes for a child's question.
	Updates, Questions int
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

// Resume is one run of the coordinator that RunUntilSettled asks the
// adapter for.
type Resume struct {
	// Run is 0 for the first run (the application's own input), then 1,
	// 2, ... for each resume.
	Run int
	// Notice is the resume's content-free user message (NoticeHeader for
	// settled Work, QuestionHeader for a child's question, both joined by
	// a blank line); "" on the first run.
	Notice string
	// Updates is the block of child updates handed over with this resume
	// (UpdatesBlock: untrusted child content), or "". The adapter adds it
	// as a user message of its own right after the notice, in each
	// request of this run only: never inside the notice or the status
	// block, never into a request already sent.
	Updates string
}

// RunUntilSettled runs the coordinator with run (Resume.Run 0: the
// application's own input) and, whenever a run ends while the Kit's
// background Work is still live, waits for the next settlement and runs
// it again with a framed, content-free user message (Resume.Notice:
// NoticeHeader) naming each Work that settled since: completed with a
// result not yet read ("read it with the work tool's result action"), or
// failed without the coordinator having seen the failure in a status
// block ("check it with the work tool's status action"), also when it
// failed after the run's last model request. Work that was cancelled, and
// results the coordinator already read, bring no notice. Results reach
// the model only through the work tool, never in a notice. What a run
// feeds its agent (the notice alone when the agent keeps its
// conversation, else the original input and the notice) is the
// adapter's.
//
// It returns when no Work of the Kit's owner is live and every settled
// Work has been announced, when the resume cap is hit (Capped), when ctx
// ends (with ctx's error), when a run fails (with its error), when the
// engine cannot read the owner's Work (Live's or Settled's error), or when
// the owner is released or the engine closed (its subscription closes, or
// the Kit is found released after a run; it then reads no more of the
// engine, where a later Kit may have the same owner id). Called after the
// Kit's Release it returns ErrReleased, on the zero Kit ErrNotPrepared,
// with a nil ctx ErrNilContext, with a nil run ErrNilRun, all before any
// run. Each settled Work is announced exactly once, none missed, also
// when several settle together or while a run is in progress, and however
// many the owner has: a subscription (work.Engine.Subscribe) only wakes
// the helper, which then reads all of the owner's settled Works
// (work/boundary's Settled, not limited like List). A Work the owner's
// retention evicts before it is announced is lost with its result. A
// notice of another kind (work.NoticeApproval) only wakes it: a Work
// awaiting approval is live, so it keeps waiting, up to the Work's
// approval timeout, until the application answers.
//
// Children that report their updates to the coordinator (ReportUpdates)
// add two things. The updates accepted since the last resume (those the
// child's filter keeps) ride with the next resume (Resume.Updates),
// batched. An update alone does not resume the coordinator; a question
// of a Work still live does, with a content-free notice of its own
// (QuestionHeader) that tells it to answer with the work tool's send
// action. A question of a Work already settled rides with the next resume
// like any update. Update notices (work.NoticeUpdate) only wake the
// helper, which then reads the updates by cursor (work.Engine.Updates).
//
// The failures the coordinator saw are those of the status blocks the
// Kit rendered (StatusBlock, StatusBlockRows) while RunUntilSettled runs.
func (s *Kit) RunUntilSettled(ctx context.Context, run func(context.Context, Resume) (string, error), opts ...SettleOption) (Settled, error) {
	cfg := settleConfig{maxResumes: DefaultMaxResumes}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	var res Settled
	switch {
	case s == nil || s.sup == nil:
		return res, ErrNotPrepared
	case ctx == nil:
		return res, ErrNilContext
	case s.Released():
		return res, ErrReleased
	case run == nil:
		return res, ErrNilRun
	}
	owner := s.owner
	sub, err := s.sup.Subscribe(ctx, owner, 0)
	if err != nil {
		return res, err
	}
	defer sub.Close()
	shown := s.watch.begin()
	defer s.watch.end(shown)
	announced := make(map[string]bool)
	watch := s.newUpdateWatch()
	resume := Resume{}
	for n := 0; ; n++ {
		answer, err := run(ctx, resume)
		if err != nil {
			return res, err
		}
		res.Answers = append(res.Answers, answer)
		if cfg.onAnswer != nil {
			cfg.onAnswer(n, answer)
		}
		var due []work.Status
		var ups pendingUpdates
		for {
			if s.Released() {
				// Released during the run: the owner's Work is gone and
				// its id may already be another Kit's.
				return res, nil
			}
			drainNotices(sub.C(), watch)
			// Live first: a Work settling between the two reads is then
			// either still live or among the settled.
			live, err := boundary.Live(ctx, s.sup, owner)
			if err != nil {
				return res, err
			}
			settled, err := boundary.Settled(ctx, s.sup, owner)
			if err != nil {
				return res, err
			}
			due = pending(settled, announced, s.watch.failedShown(shown))
			if ups, err = watch.collect(ctx, owner, settled); err != nil {
				return res, err
			}
			if len(due) > 0 || len(ups.questions) > 0 || !live {
				break
			}
			if res.Resumes >= cfg.maxResumes {
				res.Capped = true
				return res, nil
			}
			select {
			case n, ok := <-sub.C():
				if !ok {
					return res, nil // released or closed
				}
				watch.note(n)
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if len(due) == 0 && len(ups.questions) == 0 {
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
		var notice []string
		if len(due) > 0 {
			notice = append(notice, noticeMessage(due))
		}
		if len(ups.questions) > 0 {
			res.Questions++
			notice = append(notice, questionMessage(ups.questions))
		}
		resume = Resume{Run: n + 1, Notice: strings.Join(notice, "\n\n")}
		if block := UpdatesBlock(ups.works); block != "" {
			resume.Updates = block
			res.Updates += ups.count()
		}
		watch.commit(ups)
	}
}

// pending returns the settled Works (oldest settlement first) not yet
// announced that need a notice: completed with an unread result, or failed
// without the failure having been shown to the coordinator.
func pending(settled []work.Status, announced map[string]bool, shown func(string) bool) (due []work.Status) {
	for _, st := range settled {
		switch {
		case announced[st.Work.ID]:
		case st.State == work.StateCompleted && st.ResultAvailable && !st.ResultRead,
			st.State == work.StateFailed && !shown(st.Work.ID):
			due = append(due, st)
		}
	}
	return due
}

// failureWatch records, for each RunUntilSettled in progress on a Kit,
// the failed Works its status blocks have shown.
type failureWatch struct {
	mu   sync.Mutex
	sets map[*shownSet]struct{}
}

type shownSet struct{ failed map[string]bool }

func (w *failureWatch) begin() *shownSet {
	s := &shownSet{failed: make(map[string]bool)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sets == nil {
		w.sets = make(map[*shownSet]struct{})
	}
	w.sets[s] = struct{}{}
	return s
}

func (w *failureWatch) end(s *shownSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.sets, s)
}

// failedShown returns whether s saw a Work's failure.
func (w *failureWatch) failedShown(s *shownSet) func(string) bool {
	return func(id string) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return s.failed[id]
	}
}

// shown records the failed Works of a status block the Kit rendered.
func (s *Kit) shown(rows []observe.Row) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sets) == 0 {
		return
	}
	for _, r := range rows {
		if r.State == work.StateFailed {
			for set := range w.sets {
				set.failed[r.ID] = true
			}
		}
	}
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
