package temporal_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// dialCodec dials a client of its own to the server at hostPort, in the
// tests' namespace, with dc as its data converter; the test's end closes
// it.
func dialCodec(t *testing.T, hostPort string, dc converter.DataConverter) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace(), DataConverter: dc, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// sharedCodec dials the shared server (starting it if need be) with the
// test codec, and returns the client and its converter.
func sharedCodec(t *testing.T) (client.Client, converter.DataConverter) {
	t.Helper()
	dc := testcodec.Converter()
	return dialCodec(t, sharedServer(t).HostPort, dc), dc
}

// codecServerWithAddr is serverWithAddr with its client dialed with the
// test codec: it returns that client, the server's frontend address and
// namespace, and the converter (for WithDataConverter).
func codecServerWithAddr(t *testing.T) (client.Client, string, string, converter.DataConverter) {
	t.Helper()
	_, hostPort, ns := serverWithAddr(t)
	dc := testcodec.Converter()
	return dialCodec(t, hostPort, dc), hostPort, ns, dc
}

// namespaceHistories returns the raw bytes (history, with every
// payload as stored) of every workflow of the namespace, open and closed,
// by workflow id.
func namespaceHistories(t *testing.T, c client.Client) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace(), PageSize: 1000, NextPageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range resp.GetExecutions() {
			id := x.GetExecution().GetWorkflowId()
			out[id+"@"+x.GetExecution().GetRunId()] = historyRun(t, c, id, x.GetExecution().GetRunId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out
		}
	}
}

// holds reports whether any of hs holds s in plaintext: as is, or in
// base64 (a []byte in JSON: a job's handle; an update's value, a JSON
// string).
func holds(hs map[string][]byte, s string) (string, bool) {
	forms := []string{s, base64.StdEncoding.EncodeToString([]byte(s)), base64.StdEncoding.EncodeToString([]byte(`"` + s + `"`))}
	for id, h := range hs {
		for _, f := range forms {
			if bytes.Contains(h, []byte(f)) {
				return id, true
			}
		}
	}
	return "", false
}

// quietLogger discards the SDK's logs.
func quietLogger() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

// TestDataConverterProgressAndMemos: under an encryption codec, an Engine
// given the client's converter (WithDataConverter) reads a running Work's
// progress (its heartbeat details) in Status and in the deployment view's
// rows, and the Work's target from its memo; an Engine on the same client
// and task queue without it cannot decode them and says so: Status and
// Snapshot return work.ErrUnavailable, never a zero.
func TestDataConverterProgressAndMemos(t *testing.T) {
	c, dc := sharedCodec(t)
	eventQueues++
	queue := fmt.Sprintf("codec-progress-%d", eventQueues)
	base := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute), temporal.WithHeartbeatTimeout(time.Second)}
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"counting": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			work.ReportProgress(ctx, 2, 5)
			<-release
			return "counted", nil
		}},
	}, append(base, temporal.WithDataConverter(dc))...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	eng := temporal.New(c, append(base, temporal.WithDataConverter(dc), temporal.WithOptions(work.WithSnapshotInterval(time.Millisecond)))...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	blind := temporal.New(c, append(base, temporal.WithOptions(work.WithSnapshotInterval(time.Millisecond)))...)
	t.Cleanup(func() { _ = blind.Close(context.Background()) })

	o := work.NewOwner(fmt.Sprintf("codec-progress-%d", time.Now().UnixNano()))
	ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "counting", Kind: work.KindFunction},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	want := observe.Progress{Done: 2, Total: 5}
	eventually(t, "the progress under the codec", func() bool {
		st, err := eng.Status(t.Context(), o, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		return st.Progress == want
	})
	var snap observe.Snapshot
	eventually(t, "the deployment view's row", func() bool {
		snap, err = eng.Snapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(snap.Live) == 1 && snap.Live[0].Progress == want
	})
	if lw := snap.Live[0]; lw.ID != ref.ID || lw.Target != "counting" || lw.Owner != o.ID() || lw.State != work.StateRunning {
		t.Fatalf("row %+v", lw)
	}
	if st, err := blind.Status(t.Context(), o, ref.ID); !errors.Is(err, work.ErrUnavailable) {
		t.Fatalf("Status without the converter: %+v, %v; want ErrUnavailable", st, err)
	}
	if s, err := blind.Snapshot(t.Context()); !errors.Is(err, work.ErrUnavailable) {
		t.Fatalf("Snapshot without the converter: %+v, %v; want ErrUnavailable", s, err)
	}
	close(release)
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("settled %+v", st)
	}
}

// Canaries of the history scan, one per kind of content a history can
// hold.
const (
	scanInput    = "CANARY-SCAN-INPUT-5e2b"
	scanOutput   = "CANARY-SCAN-OUTPUT-5e2b"
	scanGuidance = "CANARY-SCAN-GUIDANCE-5e2b"
	scanUpdate   = "CANARY-SCAN-UPDATE-5e2b"
	scanHandle   = "CANARY-SCAN-HANDLE-5e2b"
	scanJobOut   = "CANARY-SCAN-JOBOUT-5e2b"
	scanApproval = "CANARY-SCAN-APPROVAL-5e2b"
)

// TestCodecHistoryScan: Work runs with canaries as a child's input and
// output, guidance, an update's value, an external job's handle and
// output and an approval's input, on a dev server of its own; then every
// workflow history of the namespace (the Works', the owner's registry,
// the approvals index, guidance holders while they last) is read raw.
// Under the test codec (every client dialed with it, the Engine and
// Worker given it) no canary appears in plaintext; without it, the same
// scan finds each one, so the check can fail.
func TestCodecHistoryScan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec bool
	}{{"codec", true}, {"plaintext", false}} {
		t.Run(tc.name, func(t *testing.T) {
			_, hostPort, _ := serverWithAddr(t)
			var dc converter.DataConverter = converter.GetDefaultDataConverter()
			if tc.codec {
				dc = testcodec.Converter()
			}
			c := dialCodec(t, hostPort, dc)
			hs := runCanaries(t, c, dc)
			for _, s := range []string{scanInput, scanOutput, scanGuidance, scanUpdate, scanHandle, scanJobOut, scanApproval} {
				id, found := holds(hs, s)
				if tc.codec && found {
					t.Errorf("under the codec, %s's history holds %s in plaintext", id, s)
				}
				if !tc.codec && !found {
					t.Errorf("without the codec, no history holds %s (the scan is broken)", s)
				}
			}
		})
	}
}

// runCanaries runs the scan's Work on c (dialed with dc) and returns
// every history of the namespace.
func runCanaries(t *testing.T, c client.Client, dc converter.DataConverter) map[string][]byte {
	t.Helper()
	opts := []temporal.Option{temporal.WithTaskQueue("scan"), temporal.WithRPCTimeout(time.Minute),
		temporal.WithHeartbeatTimeout(2 * time.Second), temporal.WithDataConverter(dc)}
	job := &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { return []byte(scanHandle), nil },
		Await: func(_ context.Context, h []byte) (work.Poll, error) {
			if string(h) != scanHandle {
				return work.Poll{State: work.PollFailed, Class: "bad_handle"}, nil
			}
			return work.Poll{State: work.PollDone, Output: scanJobOut}, nil
		},
		Backoff: fastBackoff,
	}
	took, gate := make(chan []string, 1), make(chan struct{})
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"echo":  {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return scanOutput, nil }},
		"batch": {Kind: work.KindFunction, Job: job},
		"talk": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			if _, err := work.ReportUpdate(ctx, "k", []byte(`"`+scanUpdate+`"`), false); err != nil {
				return "", err
			}
			return "talked", nil
		}},
		"steer": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			select { // the guidance's holder is scanned first
			case <-gate:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			for {
				if g := boundary.Guidance(ex); len(g) > 0 {
					took <- g
					return "steered", nil
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(20 * time.Millisecond): // a model boundary every 20ms
				}
			}
		}},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	eng := temporal.New(c, opts...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	o := work.NewOwner("scan-owner")
	start := func(spec work.Spec) string {
		t.Helper()
		spec.Owner = o
		if spec.Run == nil {
			spec.Run = func(context.Context) (string, error) { return "", nil }
		}
		ref, err := eng.Start(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return ref.ID
	}
	fn := func(label string) work.Target { return work.Target{Label: label, Kind: work.KindFunction} }
	echoID := start(work.Spec{Target: fn("echo"), Input: scanInput})
	talkID := start(work.Spec{Target: fn("talk"), Input: "x", Updates: &work.UpdatePolicy{}})
	steerID := start(work.Spec{Target: work.Target{Label: "steer", Kind: work.KindAgent}, Input: "x"})
	jobID := start(jobSpec(o, "x", job))
	apprID := start(work.Spec{Target: fn("echo"), Input: scanApproval, NeedsApproval: true})

	if _, err := eng.Send(t.Context(), o, steerID, "call-1", scanGuidance); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pending approval", func() bool {
		reqs, err := eng.Pending(t.Context(), o)
		return err == nil && len(reqs) == 1 && reqs[0].Input == scanApproval
	})
	// The guidance's holder deletes itself once the child took the text:
	// scan while it waits (listed: visibility trails the start), and
	// again once the Work settled.
	eventually(t, "the guidance holder listed", func() bool {
		resp, err := c.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace(), Query: "WorkflowType = '" + temporal.GuidanceWorkflowName + "'"})
		return err == nil && len(resp.GetExecutions()) == 1
	})
	pending := namespaceHistories(t, c)
	close(gate)
	if g := <-took; len(g) != 1 || g[0] != scanGuidance {
		t.Fatalf("guidance delivered = %q", g)
	}
	if err := eng.Approve(t.Context(), o, apprID); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{echoID: scanOutput, talkID: "talked", steerID: "steered", jobID: scanJobOut, apprID: scanOutput} {
		if st, out := settle(t, eng, o, id); st.State != work.StateCompleted || out != want {
			t.Fatalf("Work %s: %+v %q, want completed with %q (the scan's Work failed)", id, st, out, want)
		}
	}
	us, err := eng.Updates(t.Context(), o, talkID, 0)
	if err != nil || len(us) != 1 || !strings.Contains(string(us[0].Value), scanUpdate) {
		t.Fatalf("updates %+v, %v (the scan's Work failed)", us, err)
	}
	hs := namespaceHistories(t, c)
	for id, h := range pending {
		hs[id+" (while pending)"] = h
	}
	return hs
}
