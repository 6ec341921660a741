package enginetest

import (
	"testing"
	"time"
)

type progressReq struct {
	done, total int64
	reported    chan struct{}
}

// reportProgress has the controlled child report progress counts
// (work.ReportProgress) and waits until it did.
func (v *env) reportProgress(c *control, done, total int64) {
	v.t.Helper()
	p := progressReq{done: done, total: total, reported: make(chan struct{})}
	select {
	case c.progress <- p:
	case <-time.After(30 * time.Second):
		v.t.Fatal("the child did not take the progress report within 30s")
	}
	<-p.reported
}

// progress: a running Work's Status shows the progress counts its child
// reported last (an engine may carry them there a little later, within
// its liveness period), and the settled Work keeps the last ones.
func (s *suite) progress(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "progress")
	ref, c := v.running(o, Func, "")
	shows := func(done int64) {
		t.Helper()
		v.eventually("Status shows the reported progress", func() bool {
			st := v.status(o, ref.ID)
			return st.Progress.Done == done && st.Progress.Total == 10
		})
		if st := v.status(o, ref.ID); st.State.Terminal() {
			t.Fatalf("progress shown, but the Work is %s", st.State)
		}
	}
	v.reportProgress(c, 3, 10)
	shows(3)
	v.reportProgress(c, 7, 10)
	shows(7)
	v.finish(c, "counted", nil)
	st, out := v.settle(o, ref.ID)
	if out != "counted" || st.Progress.Done != 7 || st.Progress.Total != 10 {
		t.Fatalf("settled: %+v %q; want its last progress, 7 of 10", st.Progress, out)
	}
}
