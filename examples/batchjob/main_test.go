package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example and checks its transcript: one submit keyed by
// the Work's id, a job that is running (holding no slot) while the
// service answers "running" and once "waiting", its exact output once the
// service is done, and the engine's events in order.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf bytes.Buffer
	if err := run(ctx, &buf); err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	out := buf.String()

	m := regexp.MustCompile(`(?m)^   run_batch -> \{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"run_batch","guarantees":\{"execution":"process-local","rejoin":"process-local"\}\}$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no background launch in the transcript:\n%s", out)
	}
	id := m[1]
	q := regexp.QuoteMeta
	const output = "Processed nightly-import: 1,204 rows, 0 rejected."
	want := []string{
		q("-- model turn 1 --"),
		q(`   says: Action Input: {"input":"nightly-import","run_in_background":true}`),
		q("-- model turn 2 --"),
		q("   | "+id+" | run_batch | running | ") + `\d+s` + q(" | none"),
		q(`   work -> {"work":{"kind":"work.ref","id":"`+id+`",`) + `.*` + q(`"targetLabel":"run_batch","state":"running",`) + `.*` + q(`"resultAvailable":false}`),
		q("-- model turn 3 --"),
		q("   (engine: 0 running slots in use, 1 job waiting)"),
		q(`   says: Action Input: {"action":"result","id":"` + id + `","timeout":"30s"}`),
		q("   work -> " + output),
		q("-- model turn 4 --"),
		q("   | "+id+" | run_batch | completed | ") + `\d+s` + q(" | available"),
		q("   says: Final Answer: The nightly import finished. " + output),
		q("== answer =="),
		q("The nightly import finished. " + output),
		q("== the batch service saw =="),
		q(`submit key=` + id + ` input="nightly-import" -> batch-1`),
		q("poll 1 of batch-1 -> running"),
		q("poll 2 of batch-1 -> waiting"),
		q("poll 3 of batch-1 -> running"),
		q("poll 4 of batch-1 -> done"),
		q("== the engine reported =="),
		q("queued"), q("running"), q("waiting"),
		q("polled: waiting"), q("polled: waiting"), q("polled: waiting"), q("polled: done"),
		q("completed"),
	}
	rest := out
	for _, w := range want {
		loc := regexp.MustCompile(`(?m)^` + w + `$`).FindStringIndex(rest)
		if loc == nil {
			t.Fatalf("transcript lacks, in order, /%s/:\n%s", w, out)
		}
		rest = rest[loc[1]:]
	}
	if n := strings.Count(out, "submit key="); n != 1 {
		t.Errorf("%d submits, want exactly one:\n%s", n, out)
	}
	if n := strings.Count(out, "poll "); n != 4 {
		t.Errorf("%d polls, want 4:\n%s", n, out)
	}
	// A poll answering waiting delivers nothing: the model saw the output
	// once, in the result, and never the service's "waiting" detail.
	if strings.Contains(out, "reviewer") || strings.Count(out, "   work -> "+output) != 1 {
		t.Errorf("the wait reached the model:\n%s", out)
	}
	if strings.Contains(out, "error") {
		t.Errorf("transcript shows an error:\n%s", out)
	}
}

// TestSubmitIdempotent: a submit retried with the same key (a durable
// engine retrying an activity whose worker died) gets the same job; the
// service deduplicates on the key, which is what makes the retry safe.
func TestSubmitIdempotent(t *testing.T) {
	release := make(chan struct{})
	close(release)
	svc := newBatchService(release)
	defer svc.Close()
	c := &batchClient{base: svc.URL(), http: svc.srv.Client()}
	ctx := context.Background()
	h1, err := c.submit(ctx, "work-1", "a")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := c.submit(ctx, "work-1", "a")
	if err != nil {
		t.Fatal(err)
	}
	h3, err := c.submit(ctx, "work-2", "b")
	if err != nil {
		t.Fatal(err)
	}
	if string(h1) != string(h2) || string(h1) == string(h3) {
		t.Errorf("handles %q %q %q: want the first two equal (one key), the third another job", h1, h2, h3)
	}
	if log := svc.Log(); len(log) != 3 || !strings.Contains(log[1], "deduplicated") {
		t.Errorf("service log %q, want the retry deduplicated", log)
	}
}
