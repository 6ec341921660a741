package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := "costrow\tactions per Work\tplain\t11\t2\t<=2x\n" +
		"noise\n" +
		"BenchmarkTemporal/start-2   \t      30\t  4100 bare-us/op\t  5000 remote-us/op\t  20500 runner-us/op\t 5.0 runner/bare\t 4.1 runner/remote\t 1 ns/op\n"
	var errs strings.Builder
	rows, failed, err := parse(strings.NewReader(in), &errs)
	if err != nil || failed {
		t.Fatalf("parse: %v, failed %v", err, failed)
	}
	if len(rows) != 3 || rows[0].ours != 11 || rows[0].bare != 2 || rows[0].goal != "<=2x" {
		t.Fatalf("rows %+v", rows)
	}
	if rows[1].ours != 20.5 || rows[1].bare != 4.1 || rows[2].bare != 5 || rows[1].goal != "<=1.5x" {
		t.Fatalf("latency rows %+v", rows[1:])
	}
	rs, _, err := parse(strings.NewReader("BenchmarkRestate/result-2 \t 200\t 9000 bare-med-us\t 27000 runner-med-us\t 3.0 runner/bare\n"), &errs)
	if err != nil || len(rs) != 1 || rs[0].ours != 27 || rs[0].bare != 9 || rs[0].section != "Restate: latency (median ms)" ||
		rs[0].name != "start -> result vs a bare invocation" {
		t.Fatalf("Restate's latency row: %+v %v", rs, err)
	}
	var out strings.Builder
	write(&out, rows)
	if !strings.Contains(out.String(), "5.50x") || !strings.Contains(out.String(), "start -> work.ref vs a bare start") {
		t.Fatalf("table:\n%s", out.String())
	}
	_, failed, _ = parse(strings.NewReader("--- FAIL: TestCost (1s)\nFAIL\n"), &errs)
	if !failed || !strings.Contains(errs.String(), "--- FAIL") {
		t.Fatalf("a failure was not seen: %v %q", failed, errs.String())
	}
	if _, _, err := parse(strings.NewReader("costrow\ta\tb\tx\t2\t\n"), &errs); err == nil {
		t.Fatal("a bad row parsed")
	}
}
