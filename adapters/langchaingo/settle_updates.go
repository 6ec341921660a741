package langchaingo

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// QuestionHeader opens the content-free notice RunUntilSettled resumes
// the coordinator with when a child that reports its updates
// (ReportUpdates) asked a question while its Work is live; one line per
// such Work follows, for example
//
//	[background work notice] Background work asked a question:
//	background work 3f0c5a7e21d94b8c9e6f0a1b2c3d4e5f (research_web) asked a question: it is in the updates block; answer it with the work tool's send action
//
// The question itself is child content: it is only in the updates block
// (middleware.UpdatesBlock), a user message of its own.
const QuestionHeader = "[background work notice] Background work asked a question:"

// resumeBlock is the updates block of the run RunUntilSettled is
// resuming, and the notice (in the run's input) it follows.
type resumeBlock struct{ marker, block string }

// withUpdatesBlock inserts the resumed run's updates block, as a user
// message of its own, right after the last user message holding its
// notice (at the end when none does). Requests outside a resumed run
// with updates are returned as they are.
func (k *Kit) withUpdatesBlock(msgs []llms.MessageContent) []llms.MessageContent {
	r := k.resume.Load()
	if r == nil {
		return msgs
	}
	at := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman && strings.Contains(messageText(msgs[i]), r.marker) {
			at = i + 1
			break
		}
	}
	out := make([]llms.MessageContent, 0, len(msgs)+1)
	out = append(out, msgs[:at]...)
	out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, r.block))
	return append(out, msgs[at:]...)
}

func messageText(m llms.MessageContent) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// updateWatch is what one RunUntilSettled knows of the updates of the
// Kit's children that report them: how far each Work's were handed to
// the coordinator, and the Works update notices named.
type updateWatch struct {
	k       *Kit
	up      work.Updater
	cursor  map[string]int    // Work id -> the last Seq handed over (or passed by the filter)
	noticed map[string]string // Work id -> target label, from NoticeUpdate
}

// newUpdateWatch returns the watch of k's RunUntilSettled, or nil when no
// child reports its updates or the engine does not implement
// work.Updater (then no update reaches the coordinator).
func (k *Kit) newUpdateWatch() *updateWatch {
	up, ok := k.sup.(work.Updater)
	if !ok || !k.set.Reports() {
		return nil
	}
	return &updateWatch{k: k, up: up, cursor: map[string]int{}, noticed: map[string]string{}}
}

// note records a notice's Work when it reports an update.
func (w *updateWatch) note(n work.Notice) {
	if w != nil && n.Kind == work.NoticeUpdate {
		if report, _ := w.k.set.UpdateReport(n.Target); report {
			w.noticed[n.WorkID] = n.Target
		}
	}
}

// pendingUpdates is what a resume would hand the coordinator: each
// reporting Work's updates since the last resume that pass its filter,
// the Works among them with a question while live, and the cursor each
// Work reaches.
type pendingUpdates struct {
	works     []middleware.ReportedUpdates
	questions []middleware.ReportedUpdates // live Works that asked
	upto      map[string]int
}

func (p pendingUpdates) count() (n int) {
	for _, w := range p.works {
		n += len(w.Updates)
	}
	return n
}

// collect reads the updates the next resume would carry. The candidates
// are the Works of the owner's list (live first, at most 50), the settled
// ones and those update notices named; a Work gone meanwhile (detached,
// evicted: work.ErrNotFound) is skipped.
func (w *updateWatch) collect(ctx context.Context, owner work.Owner, settled []work.Status) (pendingUpdates, error) {
	var p pendingUpdates
	if w == nil {
		return p, nil
	}
	list, err := w.k.sup.List(ctx, owner)
	if err != nil {
		return p, err
	}
	type cand struct {
		label string
		live  bool
		known bool // its state was read
	}
	cands := map[string]cand{}
	for _, st := range list {
		cands[st.Work.ID] = cand{label: st.TargetLabel, live: !st.State.Terminal(), known: true}
	}
	for _, st := range settled {
		cands[st.Work.ID] = cand{label: st.TargetLabel, known: true}
	}
	for id, label := range w.noticed {
		if _, ok := cands[id]; !ok {
			cands[id] = cand{label: label}
		}
	}
	ids := make([]string, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	p.upto = map[string]int{}
	for _, id := range ids {
		c := cands[id]
		report, filter := w.k.set.UpdateReport(c.label)
		if !report {
			continue
		}
		ups, err := w.up.Updates(ctx, owner, id, w.cursor[id])
		if errors.Is(err, work.ErrNotFound) {
			continue
		}
		if err != nil {
			return p, err
		}
		if len(ups) == 0 {
			continue
		}
		p.upto[id] = ups[len(ups)-1].Seq
		kept := ups[:0:0]
		asked := false
		for _, u := range ups {
			if filter == nil || filter(u) {
				kept = append(kept, u)
				asked = asked || u.Question
			}
		}
		if len(kept) == 0 {
			continue
		}
		r := middleware.ReportedUpdates{WorkID: id, TargetLabel: c.label, Updates: kept}
		p.works = append(p.works, r)
		if asked && !c.known {
			st, err := w.k.sup.Status(ctx, owner, id)
			c.live = err == nil && !st.State.Terminal()
		}
		if asked && c.live {
			p.questions = append(p.questions, r)
		}
	}
	// Oldest first update first, so the block reads in acceptance order.
	sort.SliceStable(p.works, func(i, j int) bool {
		return p.works[i].Updates[0].Time.Before(p.works[j].Updates[0].Time)
	})
	return p, nil
}

// commit records that p was handed to the coordinator.
func (w *updateWatch) commit(p pendingUpdates) {
	if w == nil {
		return
	}
	for id, seq := range p.upto {
		w.cursor[id] = seq
		delete(w.noticed, id)
	}
}

func questionMessage(qs []middleware.ReportedUpdates) string {
	var b strings.Builder
	b.WriteString(QuestionHeader)
	for _, q := range qs {
		b.WriteString("\nbackground work " + q.WorkID + " (" + q.TargetLabel + ") asked a question: it is in the updates block; answer it with the work tool's send action")
	}
	return b.String()
}

// drainNotices empties ch, recording the update notices in w.
func drainNotices(ch <-chan work.Notice, w *updateWatch) {
	for {
		select {
		case n, ok := <-ch:
			if !ok {
				return
			}
			w.note(n)
		default:
			return
		}
	}
}
