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

func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf bytes.Buffer
	if err := run(ctx, &buf); err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	out := buf.String()

	m := regexp.MustCompile(`(?m)^   render_report -> \{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"render_report","guarantees":\{"execution":"process-local","rejoin":"process-local"\}\}$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no background launch in the transcript:\n%s", out)
	}
	id := m[1]
	// The rest of the transcript is fixed but for times: each line below
	// (a regular expression) must appear, in this order.
	q := regexp.QuoteMeta
	want := []string{
		q("-- model turn 1 --"),
		q(`   says: Action Input: {"input":"Q3 sales","run_in_background":true}`),
		q("-- model turn 2 --"),
		q("   | [background work] id | target | state | elapsed | result"),
		q("   | "+id+" | render_report | running | ") + `\d+s` + q(" | none"),
		q(`   says: Action Input: {"action":"status","id":"` + id + `"}`),
		q(`   work -> {"work":{"kind":"work.ref","id":"`+id+`",`) + `.*` + q(`"targetLabel":"render_report","state":"running",`) + `.*` + q(`"resultAvailable":false}`),
		q("-- model turn 3 --"),
		q(`   says: Action Input: {"action":"result","id":"` + id + `","timeout":"30s"}`),
		q("   work -> Q3 sales report rendered: summary, figures, outlook."),
		q("-- model turn 4 --"),
		q("   | "+id+" | render_report | completed | ") + `\d+s` + q(" | available"),
		q("   says: Final Answer: Your report is ready. Q3 sales report rendered: summary, figures, outlook."),
		q("== answer =="),
		q("Your report is ready. Q3 sales report rendered: summary, figures, outlook."),
	}
	rest := out
	for _, w := range want {
		loc := regexp.MustCompile(`(?m)^` + w + `$`).FindStringIndex(rest)
		if loc == nil {
			t.Fatalf("transcript lacks, in order, /%s/:\n%s", w, out)
		}
		rest = rest[loc[1]:]
	}
	if strings.Contains(out, "error") {
		t.Errorf("transcript shows an error:\n%s", out)
	}
}
