// Command benchgoals reads `go test -bench` output of the Goal benchmarks
// (and of the engine's contract floors, which have no goal) on stdin and
// prints each measured figure (median over the runs) beside its goal.
// With -check it exits 1 when a median misses its goal by more than the
// noise margin: -margin for ratios (relative) and -alloc-margin for
// allocation counts (absolute). A goal marked exact has no margin: its
// median meets it or misses it (start + await against a goroutine, at
// most 4x; the bytes of a queued Work and of a waiting job, under 1 KiB).
// make bench and make bench-check run it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goal is one measured figure and the most it may be.
type goal struct {
	bench, metric string
	max           float64
	kind          kind
	what          string
}

// kind says how a goal's median is compared with its max.
type kind uint8

const (
	ratio kind = iota // at most max, within the relative noise margin
	alloc             // an allocation count: at most max, within the absolute margin
	exact             // at most max, no margin
	under             // less than max, no margin
)

var goals = []goal{
	{"GoalStart", "x-goroutine", 2, ratio, "start -> Ref vs goroutine+channel"},
	{"FloorStart/contract/record=896B", "x-goroutine", 0, ratio, "  its contract floor, item-sized record (no goal)"},
	{"GoalStart", "start-allocs/op", 5, alloc, "start -> Ref allocations"},
	{"GoalAwait", "x-goroutine", 4, exact, "start + await vs goroutine+channel (no margin)"},
	{"FloorAwait/contract/record=896B", "x-goroutine", 0, ratio, "  its contract floor, item-sized record (no goal)"},
	{"GoalAwait", "engine-allocs/op", 12, alloc, "start + await allocations"},
	{"GoalThroughput", "x-errgroup", 3, ratio, "100k works through 8 slots vs errgroup"},
	{"FloorThroughput/contract/record=896B", "x-errgroup", 0, ratio, "  its contract floor, item-sized record (no goal)"},
	{"GoalThroughput", "x-conc", 0, ratio, "100k works through 8 slots vs conc pool (no goal)"},
	{"GoalWaitingMemory", "queued-B/work", 1024, under, "bytes per queued Work (no margin)"},
	{"GoalWaitingMemory", "waiting-B/work", 1024, under, "bytes per waiting job, its handle aside (no margin)"},
	{"GoalWaitingMemory", "x-queued", 0, ratio, "  memory of a waiting job vs a queued Work (no goal)"},
	{"GoalWaitingMemory", "goroutine-B/job", 0, ratio, "  bytes per job as a goroutine in a poll loop (no goal)"},
	{"GoalWaitingMemory", "goroutines/work", 0.001, ratio, "goroutines per waiting job"},
	{"GoalTelemetry", "x-floor", 1.25, ratio, "OTel overhead over no-op vs SDK floor"},
	{"GoalTelemetry", "added-allocs/op", 70, alloc, "OTel allocations beyond the engine's"},
	{"GoalRoundTrip/model=scripted", "x-unwrapped", 1.10, ratio, "executor round trip wrapped vs unwrapped (scripted)"},
	{"GoalRoundTrip/model=scripted", "added-allocs/op", 60, alloc, "allocations wrapping adds (scripted)"},
	{"GoalRoundTrip/model=fixed", "x-unwrapped", 1.10, ratio, "executor round trip wrapped vs unwrapped (fixed)"},
	{"GoalRoundTrip/model=fixed", "added-allocs/op", 60, alloc, "allocations wrapping adds (fixed)"},
	{"GoalEinoRoundTrip/model=scripted", "x-unwrapped", 1.15, ratio, "Eino round trip wrapped vs unwrapped (scripted)"},
	{"GoalEinoRoundTrip/model=scripted", "added-allocs/op", 0, alloc, "  allocations wrapping adds (scripted; no goal)"},
	{"GoalEinoRoundTrip/model=scripted", "x-handler", 0, ratio, "  vs a no-op Eino middleware (no goal)"},
	{"GoalEinoRoundTrip/model=scripted", "added-allocs-vs-handler/op", 0, alloc, "  allocations beyond a no-op middleware (no goal)"},
	{"GoalEinoRoundTrip/model=fixed", "x-unwrapped", 1.15, ratio, "Eino round trip wrapped vs unwrapped (fixed)"},
	{"GoalEinoRoundTrip/model=fixed", "added-allocs/op", 0, alloc, "  allocations wrapping adds (fixed; no goal)"},
	{"GoalEinoRoundTrip/model=fixed", "x-handler", 0, ratio, "  vs a no-op Eino middleware (no goal)"},
	{"GoalEinoRoundTrip/model=fixed", "added-allocs-vs-handler/op", 0, alloc, "  allocations beyond a no-op middleware (no goal)"},
}

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse collects every metric of every benchmark line: name -> unit -> values.
func parse(r io.Reader, echo io.Writer) (map[string]map[string][]float64, error) {
	out := map[string]map[string][]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if echo != nil {
			fmt.Fprintln(echo, text)
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if out[m[1]] == nil {
				out[m[1]] = map[string][]float64{}
			}
			out[m[1]][f[i+1]] = append(out[m[1]][f[i+1]], v)
		}
	}
	return out, sc.Err()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func main() {
	check := flag.Bool("check", false, "exit 1 when a median misses its goal by more than the margin")
	margin := flag.Float64("margin", 0.10, "noise margin for ratios, relative")
	allocMargin := flag.Float64("alloc-margin", 2, "noise margin for allocation counts, absolute")
	verbose := flag.Bool("v", false, "echo the benchmark output")
	flag.Parse()
	var echo io.Writer
	if *verbose {
		echo = os.Stderr
	}
	res, err := parse(os.Stdin, echo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgoals:", err)
		os.Exit(2)
	}
	failed, missing := 0, 0
	fmt.Printf("%-52s %10s %17s %6s %8s  %s\n", "measure", "median", "min..max", "runs", "goal", "")
	for _, g := range goals {
		v := res[g.bench][g.metric]
		if len(v) == 0 {
			missing++
			fmt.Printf("%-52s %10s %17s %6s %8s  %s\n", g.what, "-", "-", "0", goalText(g), "NOT RUN")
			continue
		}
		med := median(v)
		status := judge(g, med, *margin, *allocMargin)
		if status == "MISSED" {
			failed++
		}
		fmt.Printf("%-52s %10.4g %8.4g..%-8.4g %6d %8s  %s\n", g.what, med, slices.Min(v), slices.Max(v), len(v), goalText(g), status)
	}
	if *check && (failed > 0 || missing > 0) {
		fmt.Printf("bench-check: %d goal(s) missed beyond the noise margin, %d not run\n", failed, missing)
		os.Exit(1)
	}
}

// judge returns how median med stands against g: "met", "within noise"
// (beyond the goal, within the margin of its kind), "MISSED", or "(info)"
// for a figure with no goal.
func judge(g goal, med, margin, allocMargin float64) string {
	if g.max == 0 {
		return "(info)"
	}
	if med <= g.max && (g.kind != under || med < g.max) {
		return "met"
	}
	switch g.kind {
	case ratio:
		if med <= g.max*(1+margin) {
			return "within noise"
		}
	case alloc:
		if med <= g.max+allocMargin {
			return "within noise"
		}
	}
	return "MISSED"
}

func goalText(g goal) string {
	switch {
	case g.max == 0:
		return "-"
	case g.kind == alloc:
		return fmt.Sprintf("<= %g", g.max)
	case g.kind == under:
		return fmt.Sprintf("< %g", g.max)
	}
	return fmt.Sprintf("<= %gx", g.max)
}
