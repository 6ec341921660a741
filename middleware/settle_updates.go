package middleware

import (
	"context"
	"errors"
	"sort"
	"strings"

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
// (UpdatesBlock), a user message of its own.
const QuestionHeader = "[background work notice] Background work asked a question:"

// updateWatch is what one RunUntilSettled knows of the updates of the
// Kit's children that report them: how far each Work's were handed to
// the coordinator, and the Works update notices named.
type updateWatch struct {
	s       *Kit
	up      *work.Engine
	cursor  map[string]int    // Work id -> the last Seq handed over (or passed by the filter)
	noticed map[string]string // Work id -> target label, from NoticeUpdate
}

// newUpdateWatch returns the watch of s's RunUntilSettled, or nil when no
// child reports its updates.
func (s *Kit) newUpdateWatch() *updateWatch {
	if !s.Reports() {
		return nil
	}
	return &updateWatch{s: s, up: s.sup, cursor: map[string]int{}, noticed: map[string]string{}}
}

// note records a notice's Work when it reports an update.
func (w *updateWatch) note(n work.Notice) {
	if w != nil && n.Kind == work.NoticeUpdate {
		if report, _ := w.s.UpdateReport(n.Target); report {
			w.noticed[n.WorkID] = n.Target
		}
	}
}

// pendingUpdates is what a resume would hand the coordinator: each
// reporting Work's updates since the last resume that pass its filter,
// the Works among them with a question while live, and the cursor each
// Work reaches.
type pendingUpdates struct {
	works     []ReportedUpdates
	questions []ReportedUpdates // live Works that asked
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
	list, err := w.s.sup.List(ctx, owner)
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
		report, filter := w.s.UpdateReport(c.label)
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
		r := ReportedUpdates{WorkID: id, TargetLabel: c.label, Updates: kept}
		p.works = append(p.works, r)
		if asked && !c.known {
			st, err := w.s.sup.Status(ctx, owner, id)
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

func questionMessage(qs []ReportedUpdates) string {
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
