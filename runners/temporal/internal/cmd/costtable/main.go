// Command costtable prints make bench-temporal's table: on stdin the
// output of the runner's cost measurements (their "costrow" lines:
// section, case, ours, bare, goal, tab-separated) and of BenchmarkTemporal
// and runners/restate's BenchmarkRestate (their median latencies), one row
// each, ours beside bare Temporal (or a bare Restate invocation) in the
// same run. A failed test on stdin (a "--- FAIL", "FAIL" or "panic:"
// line, echoed to stderr), or no row at all, exits 1.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

type row struct {
	section, name string
	ours, bare    float64
	goal          string
}

var bench = regexp.MustCompile(`^Benchmark(Temporal|Restate)/(start|result)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse reads the rows; failed says a test failed.
func parse(r io.Reader, errs io.Writer) (rows []row, failed bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if strings.HasPrefix(trimmed, "--- FAIL") || trimmed == "FAIL" || strings.HasPrefix(trimmed, "FAIL\t") || strings.HasPrefix(trimmed, "panic:") {
			failed = true
			fmt.Fprintln(errs, text)
		}
		if f := strings.Split(text, "\t"); len(f) == 6 && f[0] == "costrow" {
			ours, err1 := strconv.ParseFloat(f[3], 64)
			bare, err2 := strconv.ParseFloat(f[4], 64)
			if err1 != nil || err2 != nil {
				return nil, failed, fmt.Errorf("costtable: bad row %q", text)
			}
			rows = append(rows, row{f[1], f[2], ours, bare, f[5]})
			continue
		}
		if m := bench.FindStringSubmatch(text); m != nil {
			metrics := map[string]float64{}
			f := strings.Fields(m[3])
			for i := 0; i+1 < len(f); i += 2 {
				if v, err := strconv.ParseFloat(f[i], 64); err == nil {
					metrics[f[i+1]] = v
				}
			}
			what := map[string]string{"start": "start -> work.ref", "result": "start -> result"}[m[2]]
			if m[1] == "Restate" {
				// BenchmarkRestate (runners/restate): beside a bare
				// workflow invocation with one journaled step.
				rows = append(rows, row{"Restate: latency (median ms)", what + " vs a bare invocation",
					metrics["runner-med-us"] / 1000, metrics["bare-med-us"] / 1000, ""})
				continue
			}
			goal := "<=1.5x"
			if m[2] == "result" {
				goal = ""
			}
			rows = append(rows,
				row{"latency (median ms)", what + " vs a bare start", metrics["runner-us/op"] / 1000, metrics["bare-us/op"] / 1000, goal},
				row{"latency (median ms)", what + " vs a bare start, activity on its own queue", metrics["runner-us/op"] / 1000, metrics["remote-us/op"] / 1000, ""})
		}
	}
	return rows, failed, sc.Err()
}

func write(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tcase\tours\tbare\tours/bare\tgoal")
	for _, r := range rows {
		ratio := "-"
		if r.bare > 0 {
			ratio = fmt.Sprintf("%.2fx", r.ours/r.bare)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s\t%s\n", r.section, r.name, r.ours, r.bare, ratio, r.goal)
	}
	_ = tw.Flush()
}

func main() {
	rows, failed, err := parse(os.Stdin, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	write(os.Stdout, rows)
	if failed || len(rows) == 0 {
		fmt.Fprintln(os.Stderr, "costtable: a measurement failed or printed no row (see above)")
		os.Exit(1)
	}
}
