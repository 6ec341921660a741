package temporal_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

const (
	canaryUpdate   = "CANARY-UPDATE-7f3a"
	canaryQuestion = "CANARY-QUESTION-7f3a"
	canaryAnswer   = "CANARY-ANSWER-7f3a"
)

// updateSeqs describes updates as seq:key=value (a question ends in ?).
func updateSeqs(us []work.Update) string {
	var b strings.Builder
	for i, u := range us {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s=%s", u.Seq, u.Key, u.Value)
		if u.Question {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// reportClass is "ok <seq>" for an accepted update, else the refusal's
// class.
func reportClass(rec work.UpdateReceipt, err error) string {
	var e *work.Error
	switch {
	case err == nil:
		return "ok " + strconv.Itoa(rec.Seq)
	case errors.As(err, &e):
		return e.Class
	}
	return err.Error()
}

// TestUpdateDefaults: with a zero UpdatePolicy a Work on Temporal takes 32
// updates and 16 KiB of payload (work.UpdatePolicy's documented
// defaults), refusing the next before it is accepted.
func TestUpdateDefaults(t *testing.T) {
	const defaultUpdates, defaultUpdateBytes = 32, 16 << 10
	eng, _ := deploy(t, "updefaults", map[string]temporal.Child{
		"talker": {Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
			var got []string
			switch in {
			case "count":
				for i := 1; i <= defaultUpdates+1; i++ {
					got = append(got, reportClass(work.ReportUpdate(ctx, "k"+strconv.Itoa(i), []byte(strconv.Itoa(i)), false)))
				}
				return got[defaultUpdates-1] + "|" + got[defaultUpdates], nil
			case "bytes":
				big := `"` + strings.Repeat("x", defaultUpdateBytes-2) + `"` // exactly the bound
				got = append(got, reportClass(work.ReportUpdate(ctx, "over", []byte(big+" "), false)))
				got = append(got, reportClass(work.ReportUpdate(ctx, "exact", []byte(big), false)))
				got = append(got, reportClass(work.ReportUpdate(ctx, "one-more", []byte("1"), false)))
				return strings.Join(got, "|"), nil
			}
			return "", errors.New("unknown input")
		}},
	}, nil, nil)
	o := work.NewOwner(fmt.Sprintf("updefaults-%d", time.Now().UnixNano()))
	for _, tc := range []struct{ in, out string }{
		{"count", "ok 32|count"},
		{"bytes", "bytes|ok 1|bytes"},
	} {
		ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "talker", Kind: work.KindFunction},
			Input: tc.in, Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		st, out := settle(t, eng, o, ref.ID)
		if st.State != work.StateCompleted || out != tc.out {
			t.Fatalf("%s: %s %q, want completed %q", tc.in, st.State, out, tc.out)
		}
		us, err := eng.Updates(t.Context(), o, ref.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := defaultUpdates
		if tc.in == "bytes" {
			want = 1
		}
		if len(us) != want || us[len(us)-1].Seq != want {
			t.Fatalf("%s: %d updates (last %d), want %d", tc.in, len(us), us[len(us)-1].Seq, want)
		}
	}
}

// talkerFirst is the "talker" target of the worker process (process_test.go):
// its first attempt reports two updates, says it started and blocks until
// the process is killed.
func talkerFirst(ctx context.Context, _ string) (string, error) {
	ex, _ := work.ExecutionFrom(ctx)
	for _, k := range []string{"u1", "u2"} {
		if _, err := work.ReportUpdate(ctx, k, []byte(`"`+k+`"`), false); err != nil {
			fmt.Fprintln(os.Stderr, "report", k, err)
			return "", err
		}
	}
	fmt.Printf("started %s\n", ex.WorkID())
	<-ctx.Done()
	return "", ctx.Err()
}

// TestUpdatesSurviveWorkerDeath: a Work's updates are its workflow's state.
// The worker process running its attempt (and caching its workflow) is
// SIGKILLed after two updates; they are read back at once, the retried
// attempt on another worker repeats one (a duplicate: the same sequence
// number) and adds two, the last a question that the application answers
// (Answer, to a function child); the updates stay readable, in order,
// after the Work completed. Every client is dialed with the test codec
// (internal/testcodec).
func TestUpdatesSurviveWorkerDeath(t *testing.T) {
	c, hostPort, ns, dc := codecServerWithAddr(t)
	queue := "upd-restart"
	opts := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithHeartbeatTimeout(time.Second),
		temporal.WithRetryable("talker"), temporal.WithDataConverter(dc)}
	wf, err := temporal.NewWorker(c, nil, opts...) // workflows only
	if err != nil || wf.Start() != nil {
		t.Fatal("workflow worker", err)
	}
	defer wf.Stop()
	eng := temporal.New(c, opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("upd-restart-owner")

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTWORK_WORKER="+hostPort+" "+ns+" "+queue, testcodec.Env())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "talker", Kind: work.KindFunction},
		Input: "x", Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "started "+ref.ID {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	us, err := eng.Updates(t.Context(), o, ref.ID, 0)
	if got, want := updateSeqs(us), `1:u1="u1" 2:u2="u2"`; err != nil || got != want {
		t.Fatalf("Updates after the worker's death = %s, %v; want %s", got, err, want)
	}

	asked := make(chan string, 1)
	w2, err := temporal.NewWorker(c, map[string]temporal.Child{
		"talker": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			var got []string
			rec, err := work.ReportUpdate(ctx, "u1", []byte(`"u1"`), false)
			got = append(got, reportClass(rec, err)+fmt.Sprintf(" dup=%v", rec.Duplicate))
			got = append(got, reportClass(work.ReportUpdate(ctx, "u3", []byte(`"u3"`), false)))
			got = append(got, reportClass(work.ReportUpdate(ctx, "q", []byte(`{"q":"go on?"}`), true)))
			asked <- strings.Join(got, "|")
			answer, err := work.AwaitAnswer(ctx)
			if err != nil {
				return "", err
			}
			return "answered: " + strings.Join(answer, "|"), nil
		}},
	}, opts...)
	if err != nil || w2.Start() != nil {
		t.Fatal("second worker", err)
	}
	defer w2.Stop()
	select {
	case got := <-asked:
		if want := "ok 1 dup=true|ok 3|ok 4"; got != want {
			t.Fatalf("the second attempt's reports = %s, want %s", got, want)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no second attempt within two minutes")
	}
	if _, err := eng.Send(t.Context(), o, ref.ID, "s", "no"); !errors.Is(err, work.ErrNotAgent) {
		t.Fatalf("Send(function child) = %v, want not an agent", err)
	}
	if _, err := eng.Answer(t.Context(), o, ref.ID, "a", "yes"); err != nil {
		t.Fatal(err)
	}
	st, out := settle(t, eng, o, ref.ID)
	if st.State != work.StateCompleted || out != "answered: yes" || st.Attempt != 2 {
		t.Fatalf("status %+v output %q, want completed by attempt 2 with the answer", st, out)
	}
	us, err = eng.Updates(t.Context(), o, ref.ID, 1)
	if got, want := updateSeqs(us), `2:u2="u2" 3:u3="u3" 4:q={"q":"go on?"}?`; err != nil || got != want {
		t.Fatalf("Updates after the end = %s, %v; want %s", got, err, want)
	}
}

// TestUpdateCanary: update values, questions and answers reach no span,
// metric, log line, status row or Status, and the owner's registry holds
// none of them (it counts updates); the Work's own history holds them (its
// workflow state, as its input: see the package doc).
func TestUpdateCanary(t *testing.T) {
	tel := newObserved(t, nil)
	eng, _ := deploy(t, "updcanary", map[string]temporal.Child{
		"agent": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			if _, err := work.ReportUpdate(ctx, "k", []byte(`{"note":"`+canaryUpdate+`"}`), false); err != nil {
				return "", err
			}
			if _, err := work.ReportUpdate(ctx, "k", []byte(`{"note":"`+canaryUpdate+` other"}`), false); !errors.Is(err, work.ErrUpdateRefused) ||
				strings.Contains(err.Error(), "CANARY") {
				return "", fmt.Errorf("the conflict: %v", err)
			}
			if _, err := work.ReportUpdate(ctx, "q", []byte(`{"question":"`+canaryQuestion+`"}`), true); err != nil {
				return "", err
			}
			if _, err := boundary.BeginRequest(ex); err != nil { // waits for the answer
				return "", err
			}
			g := boundary.Guidance(ex)
			if len(g) != 1 || g[0] != canaryAnswer {
				return "", fmt.Errorf("guidance %d", len(g))
			}
			return "ok", nil
		}},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(tel.obs))}, []temporal.Option{temporal.WithOptions(work.WithObserver(tel.obs))})
	o := work.NewOwner(fmt.Sprintf("updcanary-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "agent", Kind: work.KindAgent},
		Input: "x", Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the question", func() bool {
		us, err := eng.Updates(t.Context(), o, ref.ID, 1)
		return err == nil && len(us) == 1 && us[0].Question
	})
	st, err := eng.Status(t.Context(), o, ref.ID)
	if err != nil || strings.Contains(fmt.Sprintf("%+v", st), "CANARY") {
		t.Fatalf("status %+v, %v", st, err)
	}
	rows, _, err := boundary.Rows(t.Context(), eng, o)
	if err != nil || len(rows) != 1 || strings.Contains(fmt.Sprintf("%+v", rows), "CANARY") {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if _, err := eng.Answer(t.Context(), o, ref.ID, "a", canaryAnswer); err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, eng, o, ref.ID); st.State != work.StateCompleted || out != "ok" {
		t.Fatalf("the child = %s %q (the canary check is broken)", st.State, out)
	}
	c := server(t)
	value64 := base64.StdEncoding.EncodeToString([]byte(`{"note":"` + canaryUpdate + `"}`)) // []byte is base64 in JSON
	if h := history(t, c, ref.ID); !bytes.Contains(h, []byte(value64)) {
		t.Fatal("the Work's history lacks its update (the canary check is broken)")
	}
	h := history(t, c, "agentwork-owner/"+o.ID())
	for _, s := range []string{canaryUpdate, canaryQuestion, canaryAnswer, value64} {
		if bytes.Contains(h, []byte(s)) {
			t.Fatalf("the owner's registry's history carries %s", s)
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
	if len(invokeSpans(spans, ref.ID)) != 1 {
		t.Fatal("no span of the Work (the canary check is broken)")
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

// TestUpdateRefusalsOutOfHistory: an update that cannot be accepted as a
// new one (over the bytes left, over the count, a conflict once the log is
// full) is refused by the workflow's validator, so that it never enters
// the Work's history, and still has its EventUpdate; a repeat of an
// accepted update gets its first receipt.
func TestUpdateRefusalsOutOfHistory(t *testing.T) {
	rec := &enginetest.Recorder{}
	big := []byte(`"` + strings.Repeat("B", 200) + `"`)
	late := []byte(`"late-count-refusal"`)
	other := []byte(`"a-conflicting-payload"`)
	eng, _ := deploy(t, "updhistory", map[string]temporal.Child{
		"talker": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			var got []string
			report := func(key string, value []byte) {
				rec, err := work.ReportUpdate(ctx, key, value, false)
				got = append(got, reportClass(rec, err)+map[bool]string{true: " dup"}[rec.Duplicate])
			}
			report("a", []byte(`"small"`))
			report("big", big)
			report("b", []byte(`"two"`))
			report("c", late)
			report("a", []byte(`"small"`))
			report("a", other)
			return strings.Join(got, "|"), nil
		}},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(rec))}, []temporal.Option{temporal.WithOptions(work.WithObserver(rec))})
	o := work.NewOwner(fmt.Sprintf("updhistory-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "talker", Kind: work.KindFunction},
		Input: "x", Updates: &work.UpdatePolicy{MaxUpdates: 2, MaxBytes: 64}, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	st, out := settle(t, eng, o, ref.ID)
	if want := "ok 1|bytes|ok 2|count|ok 1 dup|conflict"; st.State != work.StateCompleted || out != want {
		t.Fatalf("%s %q, want completed %q", st.State, out, want)
	}
	h := history(t, server(t), ref.ID)
	if !bytes.Contains(h, []byte(base64.StdEncoding.EncodeToString([]byte(`"small"`)))) {
		t.Fatal("the Work's history lacks its accepted update (the check is broken)")
	}
	for _, v := range [][]byte{big, late, other} {
		if bytes.Contains(h, []byte(base64.StdEncoding.EncodeToString(v))) {
			t.Errorf("the Work's history holds the refused update %s", v)
		}
	}
	var classes []string
	for _, e := range eventsOf(rec, ref.ID) {
		if e.Type == observe.EventUpdate {
			classes = append(classes, e.ErrorClass)
		}
	}
	if got, want := strings.Join(classes, ","), ",bytes,,count,conflict"; got != want {
		t.Fatalf("EventUpdate classes = %q, want %q", got, want)
	}
}

// TestUpdateAfterSettled: a report from a child's stray goroutine after
// its Work settled is refused as ending (its workflow has closed: a repeat
// too), with no event after the terminal one.
func TestUpdateAfterSettled(t *testing.T) {
	rec := &enginetest.Recorder{}
	stray := make(chan context.Context, 1)
	eng, _ := deploy(t, "updsettled", map[string]temporal.Child{
		"talker": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			if _, err := work.ReportUpdate(ctx, "a", []byte(`1`), false); err != nil {
				return "", err
			}
			stray <- ctx
			return "done", nil
		}},
	}, []temporal.Option{temporal.WithOptions(work.WithObserver(rec))}, []temporal.Option{temporal.WithOptions(work.WithObserver(rec))})
	o := work.NewOwner(fmt.Sprintf("updsettled-%d", time.Now().UnixNano()))
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "talker", Kind: work.KindFunction},
		Input: "x", Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("settled %s", st.State)
	}
	ctx := <-stray
	_, err = work.ReportUpdate(ctx, "b", []byte(`2`), false)
	if got := reportClass(work.UpdateReceipt{}, err); got != observe.UpdateRefusedEnding {
		t.Fatalf("a report after the Work settled = %s, want ending", got)
	}
	if r, err := work.ReportUpdate(ctx, "a", []byte(`1`), false); err != nil && !errors.Is(err, work.ErrUpdateRefused) || err == nil && r.Seq != 1 {
		t.Fatalf("a repeat after the Work settled = %+v, %v", r, err)
	}
	terminal := false
	for _, e := range eventsOf(rec, ref.ID) {
		switch {
		case e.Type == observe.EventCompleted:
			terminal = true
		case e.Type == observe.EventUpdate && terminal:
			t.Fatalf("an EventUpdate (%q) after the terminal event", e.ErrorClass)
		}
	}
	if !terminal {
		t.Fatal("no terminal event (the check is broken)")
	}
	if us, err := eng.Updates(t.Context(), o, ref.ID, 0); err != nil || updateSeqs(us) != "1:a=1" {
		t.Fatalf("Updates = %s, %v", updateSeqs(us), err)
	}
}
