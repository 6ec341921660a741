package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Seen is one Work as a chaos driver saw it after a fault: what its
// owner reads (State, Class, Attempt; Found false when the owner gets
// not_found), how many attempts its workers said they started, and the
// settlement notices its coordinator received.
type Seen struct {
	ID, Label string
	Found     bool
	State     string
	Class     string
	Attempt   int
	// Starts is how many attempts the workers said they began.
	Starts int
	// Retryable: the child may run again (attempt then counts it).
	Retryable bool
	// Live: the Work is meant to run on past the check (awaiting
	// approval, waiting for a gate the driver keeps shut, detached).
	Live bool
	// Notify: it settled after the coordinator's Subscription began, so
	// exactly one settlement notice is due.
	Notify bool
	// Notices is the settlement notices the coordinator received.
	Notices int
}

// ModelCall is one model-facing call (a work tool action or a launch)
// made while the service was unavailable: Answer is what the model read
// (the tool's string), GoErr the Go error the tool returned instead (an
// executor would abort), Took how long it took and Bound how long it may.
type ModelCall struct {
	What     string
	Answered bool
	Answer   string
	GoErr    string
	Took     time.Duration
	Bound    time.Duration
}

// Code is the error object's code of the answer ("" when the answer is
// not an error object).
func (c ModelCall) Code() string {
	var e struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(c.Answer), &e) != nil || e.Error == nil {
		return ""
	}
	return e.Error.Code
}

// Tally is one fault's run on one runner: the Work it drove, the
// model-facing calls during the outage, and the times of the service's
// restart (or the network's return) and of the first Work completed
// after it.
type Tally struct {
	Runner, Fault string
	Works         []Seen
	Calls         []ModelCall
	Restarted     time.Time
	FirstDone     time.Time
	// Notes are what the driver measured besides (for example how long
	// the service took to notice a dead connection).
	Notes []string
	// Forbidden are failure classes no Work of the run may end with (a
	// server outage must not end Work whose worker lived as worker_lost).
	Forbidden []string
	// Problems are the driver's other checks that failed (a result, the
	// order of guidance, the status block during the outage).
	Problems []string
}

// Lost are the Works the owner cannot find, or that neither ended nor
// are meant to run on.
func (t *Tally) Lost() []string {
	var out []string
	for _, w := range t.Works {
		if !w.Found || (!w.Live && !IsTerminal(w.State)) {
			out = append(out, w.ID)
		}
	}
	return out
}

// Duplicated are the Works whose child ran more times than it may (a
// second start of a child that is not retryable, or more starts than
// the attempts its status counts), or whose settlement was notified more
// than once.
func (t *Tally) Duplicated() []string {
	var out []string
	for _, w := range t.Works {
		if (w.Starts > 1 && !w.Retryable) || w.Starts > max(w.Attempt, 1) || w.Notices > 1 {
			out = append(out, w.ID)
		}
	}
	return out
}

// Unanswered are the model-facing calls that got no answer, or got it
// past their bound.
func (t *Tally) Unanswered() []string {
	var out []string
	for _, c := range t.Calls {
		if c.GoErr == "" && (!c.Answered || c.Took > c.Bound) {
			out = append(out, fmt.Sprintf("%s (%v > %v)", c.What, c.Took.Round(time.Millisecond), c.Bound))
		}
	}
	return out
}

// GoErrors are the model-facing calls answered by a Go error.
func (t *Tally) GoErrors() []string {
	var out []string
	for _, c := range t.Calls {
		if c.GoErr != "" {
			out = append(out, c.What)
		}
	}
	return out
}

// Unnotified are the Works whose settlement notice never came.
func (t *Tally) Unnotified() []string {
	var out []string
	for _, w := range t.Works {
		if w.Notify && IsTerminal(w.State) && w.Notices == 0 {
			out = append(out, w.ID)
		}
	}
	return out
}

// Failures are the checks the run failed, one line each ("" checks
// passed: none).
func (t *Tally) Failures() []string {
	var out []string
	add := func(what string, ids []string) {
		if len(ids) > 0 {
			out = append(out, fmt.Sprintf("%s/%s: %s: %s", t.Runner, t.Fault, what, strings.Join(ids, ", ")))
		}
	}
	add("lost", t.Lost())
	add("duplicated", t.Duplicated())
	add("unanswered", t.Unanswered())
	add("answered by a Go error", t.GoErrors())
	add("notice not delivered", t.Unnotified())
	var classed []string
	for _, w := range t.Works {
		for _, c := range t.Forbidden {
			if w.State == "failed" && w.Class == c {
				classed = append(classed, w.ID+" ("+c+")")
			}
		}
	}
	add("failed with a forbidden class", classed)
	for _, p := range t.Problems {
		out = append(out, fmt.Sprintf("%s/%s: %s", t.Runner, t.Fault, p))
	}
	return out
}

// Check names the checks of Failures, for a driver that shows each
// failing against a broken build.
const (
	CheckLost       = "lost"
	CheckDuplicated = "duplicated"
	CheckUnanswered = "unanswered"
	CheckGoError    = "answered by a Go error"
	CheckNotice     = "notice not delivered"
)

// Fails reports whether the check named check (a Check constant) failed.
func (t *Tally) Fails(check string) bool {
	for _, f := range t.Failures() {
		if strings.Contains(f, ": "+check+": ") {
			return true
		}
	}
	return false
}

// TableHeader is the first line of WriteTable.
const TableHeader = "runner | fault | started | completed | cancelled | failed by class | live | lost | duplicated | model errors in the outage | unanswered | Go errors | notices missed | restart to first completion"

// WriteTable writes the tallies as the chaos table: one row per fault.
func WriteTable(w io.Writer, ts []*Tally) {
	fmt.Fprintln(w, TableHeader)
	for _, t := range ts {
		var completed, cancelled, live int
		failed := map[string]int{}
		for _, s := range t.Works {
			switch {
			case s.State == "completed":
				completed++
			case s.State == "cancelled":
				cancelled++
			case s.State == "failed":
				failed[s.Class]++
			case s.Found && s.Live:
				live++
			}
		}
		codes := map[string]int{}
		for _, c := range t.Calls {
			if code := c.Code(); code != "" {
				codes[code]++
			} else if c.Answered && c.GoErr == "" {
				codes["(answered)"]++
			}
		}
		first := "-"
		if !t.Restarted.IsZero() && !t.FirstDone.IsZero() {
			first = t.FirstDone.Sub(t.Restarted).Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(w, "%s | %s | %d | %d | %d | %s | %d | %d | %d | %s | %d | %d | %d | %s\n",
			t.Runner, t.Fault, len(t.Works), completed, cancelled, counts(failed), live,
			len(t.Lost()), len(t.Duplicated()), counts(codes), len(t.Unanswered()), len(t.GoErrors()),
			len(t.Unnotified()), first)
	}
	for _, t := range ts {
		for _, n := range t.Notes {
			fmt.Fprintf(w, "note: %s/%s: %s\n", t.Runner, t.Fault, n)
		}
	}
}

// counts renders a count map as "a:1 b:2" in key order ("-" when empty).
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}
