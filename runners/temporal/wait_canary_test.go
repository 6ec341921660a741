package temporal_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

const (
	canaryHandle   = "CANARY-HANDLE-7f3a"
	canaryJobOut   = "CANARY-JOBOUT-7f3a"
	canaryApproval = "CANARY-APPROVAL-7f3a"
)

// TestWaitCanary: a job's handle and output and an approval's input reach
// no span, metric, log line or status row, and neither the owner's
// registry nor the approvals index holds them.
func TestWaitCanary(t *testing.T) {
	tel := newObserved(t, nil)
	job := &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { return []byte(canaryHandle), nil },
		Await: func(_ context.Context, h []byte) (work.Poll, error) {
			if string(h) != canaryHandle {
				return work.Poll{State: work.PollFailed, Class: "bad_handle"}, nil
			}
			return work.Poll{State: work.PollDone, Output: canaryJobOut}, nil
		},
		Backoff: fastBackoff,
	}
	eng, queue := deploy(t, "waitcanary", map[string]temporal.Child{
		"batch": {Kind: work.KindFunction, Job: job},
		"echo":  {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(tel.obs))}, []temporal.Option{temporal.WithOptions(work.WithObserver(tel.obs))})
	o := work.NewOwner(fmt.Sprintf("waitcanary-%d", time.Now().UnixNano()))
	jref, err := eng.Start(context.Background(), jobSpec(o, canaryInput, job))
	if err != nil {
		t.Fatal(err)
	}
	aref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
		Input: canaryApproval, NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, eng, o, jref.ID); st.State != work.StateCompleted || out != canaryJobOut {
		t.Fatalf("job = %+v %q (the canary check is broken)", st, out)
	}
	var reqs []work.ApprovalRequest
	eventually(t, "the pending approval", func() bool {
		reqs, err = eng.Pending(t.Context(), o)
		return err == nil && len(reqs) == 1
	})
	if reqs[0].Input != canaryApproval {
		t.Fatalf("the approver reads %q, want the input", reqs[0].Input)
	}
	rows, _, err := boundary.Rows(t.Context(), eng, o)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if s := fmt.Sprintf("%+v", rows); strings.Contains(s, "CANARY") {
		t.Fatalf("a status row carries content: %s", s)
	}
	if err := eng.Deny(t.Context(), o, aref.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, eng, o, aref.ID); st.Class != work.ClassDenied {
		t.Fatalf("denied: %+v", st)
	}
	c := server(t)
	handle64 := base64.StdEncoding.EncodeToString([]byte(canaryHandle)) // []byte is base64 in JSON
	if h := history(t, c, jref.ID); !bytes.Contains(h, []byte(handle64)) {
		t.Fatal("the job's history lacks its handle (the canary check is broken)")
	}
	for _, id := range []string{"agentwork-owner/" + o.ID(), "agentwork-approvals/" + queue} {
		h := history(t, c, id)
		for _, s := range []string{canaryInput, canaryHandle, handle64, canaryJobOut, canaryApproval} {
			if bytes.Contains(h, []byte(s)) {
				t.Fatalf("%s's history carries %s", id, s)
			}
		}
	}
	logged := tel.logs.String()
	if !strings.Contains(logged, "agentwork.work.completed") || strings.Contains(logged, "CANARY") {
		t.Fatalf("logs lack the lifecycle or carry content:\n%s", logged)
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if m := fmt.Sprintf("%+v", rm); strings.Contains(m, "CANARY") || !strings.Contains(m, "agentwork.work.transitions") {
		t.Fatalf("metrics carry content or no lifecycle: %s", m)
	}
	spans := tel.spans.Ended()
	if len(invokeSpans(spans, jref.ID)) != 1 {
		t.Fatal("no span of the job (the canary check is broken)")
	}
	for _, s := range spans {
		var b strings.Builder
		b.WriteString(s.Name())
		for _, a := range s.Attributes() {
			b.WriteString(a.Value.String())
		}
		for _, e := range s.Events() {
			b.WriteString(e.Name)
			for _, a := range e.Attributes {
				b.WriteString(a.Value.String())
			}
		}
		if strings.Contains(b.String(), "CANARY") {
			t.Fatalf("span %q carries content: %s", s.Name(), b.String())
		}
	}
}
