package restate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// costRounds is how many Works of each case TestCost measures: one in a
// plain test run (so that the counting cannot rot), more with
// AGENTWORK_RESTATE_COST set (the table of docs/notes/durable-cost-restate.md).
func costRounds() int {
	if n, err := strconv.Atoi(os.Getenv("AGENTWORK_RESTATE_COST")); err == nil && n > 0 {
		return n
	}
	return 1
}

// cost is what Restate stored for the Works of one case: the invocations
// of the case's services (each a call Restate journals and retries; shared
// handlers included) and their journal entries (commands and
// notifications, sys_journal), by handler.
type cost struct {
	invocations, entries int
	journalBytes         int            // the journal entries' encoded size (sys_journal.raw_length)
	stateBytes           int            // the services' state left once the Works ended (state.value_length)
	byHandler            map[string]int // "<service suffix>/<handler>" -> invocations
}

// adminRows runs an introspection query and decodes its rows.
func adminRows(t *testing.T, admin, sql string, out any) {
	t.Helper()
	var body struct {
		Rows json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal([]byte(adminQuery(t, admin, sql)), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Rows) > 0 {
		if err := json.Unmarshal(body.Rows, out); err != nil {
			t.Fatal(err)
		}
	}
}

// retainJournals makes Restate keep the completed invocations and the
// journals of every service whose name starts with prefix (admin API,
// PATCH /services/<name>), so that they can be counted after the Work
// ended: without it a completed call leaves no row.
func retainJournals(t *testing.T, s *restatetest.Server, prefix string) {
	t.Helper()
	var svcs []struct {
		Name string `json:"name"`
	}
	adminRows(t, s.Admin, "SELECT name FROM sys_service WHERE starts_with(name, '"+prefix+"')", &svcs)
	if len(svcs) == 0 {
		t.Fatalf("no service starts with %s", prefix)
	}
	for _, svc := range svcs {
		body := []byte(`{"journal_retention":"1h","idempotency_retention":"1h"}`)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, s.Admin+"/services/"+svc.Name, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("PATCH /services/%s: %s %s", svc.Name, resp.Status, b)
		}
	}
}

// countCost counts the invocations and journal entries of the services
// whose name starts with prefix, once none of them is still running
// (the last transitions are one-way sends).
func countCost(t *testing.T, s *restatetest.Server, prefix string) cost {
	t.Helper()
	where := "starts_with(target_service_name, '" + prefix + "')"
	deadline := time.Now().Add(time.Minute)
	for {
		var live []struct {
			N int `json:"n"`
		}
		adminRows(t, s.Admin, "SELECT COUNT(*) AS n FROM sys_invocation WHERE "+where+" AND status <> 'completed'", &live)
		if len(live) == 1 && live[0].N == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("invocations of %s still live: %+v", prefix, live)
		}
		time.Sleep(20 * time.Millisecond) // Restate's own bookkeeping: no event to wait on
	}
	var inv []struct {
		Service string `json:"svc"`
		Handler string `json:"handler"`
		N       int    `json:"n"`
	}
	adminRows(t, s.Admin, "SELECT target_service_name AS svc, target_handler_name AS handler, COUNT(*) AS n FROM sys_invocation WHERE "+
		where+" GROUP BY 1, 2", &inv)
	var ent []struct {
		N     int `json:"n"`
		Bytes int `json:"bytes"`
	}
	adminRows(t, s.Admin, "SELECT COUNT(*) AS n, SUM(j.raw_length) AS bytes FROM sys_journal j JOIN sys_invocation i ON j.id = i.id "+
		"WHERE starts_with(i.target_service_name, '"+prefix+"')", &ent)
	var st []struct {
		Bytes int `json:"bytes"`
	}
	adminRows(t, s.Admin, "SELECT SUM(value_length) AS bytes FROM state WHERE starts_with(service_name, '"+prefix+"')", &st)
	c := cost{byHandler: map[string]int{}}
	for _, r := range inv {
		c.invocations += r.N
		c.byHandler[strings.TrimPrefix(r.Service, prefix)+"/"+r.Handler] += r.N
	}
	if len(ent) == 1 {
		c.entries, c.journalBytes = ent[0].N, ent[0].Bytes
	}
	if len(st) == 1 {
		c.stateBytes = st[0].Bytes
	}
	return c
}

// The cases of the cost table. Each runs its Works in a namespace of its
// own, so that what Restate stored for it is counted apart.
const (
	casePlain    = "plain background Work: launched, run, read"
	caseGuidance = "two guidance messages, taken at one boundary"
	caseCancel   = "cancelled while running"
	caseCall     = "one foreground call"
	caseBare     = "bare: one workflow invocation, one step, awaited"
	casePoll     = "plain, its child running 1 s (the cancel poll's fallback: every 4 x 100 ms)"
)

// TestCost counts, per Work, the invocations and journal entries Restate
// stores for each case of the cost table, beside a bare workflow
// invocation with one journaled step, and logs the table (go test -v).
// It asserts what the contract fixes: the bare invocation is one; each
// guidance message is one Send and the boundary one Take; the cancel one
// Cancel; a foreground call none (it runs in the calling process); and
// that every Work costs the same invocations as the others of its case
// (and journal entries, except a cancelled one: see below). The attempt's
// cancel poll (WithPollInterval) is set above the runs, so that the
// figures do not depend on how long a child ran: each poll costs one
// invocation of the control object's Peek (see the doc).
func TestCost(t *testing.T) {
	s := server(t)
	rounds := costRounds()
	proceed, started := map[string]chan struct{}{}, map[string]chan struct{}{}
	child := restate.Child{Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		if strings.HasPrefix(in, "s") {
			time.Sleep(time.Second) // a child that runs for a second
		}
		if ch := proceed[in]; ch != nil {
			close(started[in])
			<-ch // the test sent the guidance, or asked to cancel
			ex, _ := work.ExecutionFrom(ctx)
			boundary.Guidance(ex) // one model boundary
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		return in, nil
	}}
	for i := range rounds {
		for _, c := range []string{"g", "c"} {
			proceed[c+strconv.Itoa(i)] = make(chan struct{})
			started[c+strconv.Itoa(i)] = make(chan struct{})
		}
	}
	table := map[string]cost{}
	measure := func(name string, run func(e *work.Engine, o work.Owner, i int), opts ...restate.Option) {
		ns := "cost" + strconv.FormatInt(namespaces.Add(1), 10)
		e, _ := deployRunner(t, s, ns, map[string]restate.Child{"agent": child},
			append([]restate.Option{restate.WithPollInterval(time.Hour)}, opts...)...)
		retainJournals(t, s, ns+".")
		o := work.NewOwner("cost-" + ns)
		for i := range rounds {
			run(e, o, i)
		}
		table[name] = countCost(t, s, ns+".")
	}
	spec := func(o work.Owner, in string) work.Spec {
		return work.Spec{Owner: o, Target: work.Target{Label: "agent", Kind: work.KindAgent}, Input: in,
			Run: func(ctx context.Context) (string, error) { return child.Run(ctx, in) }}
	}
	// settle waits for Work id to end without reading it through the
	// runner (a read costs invocations): Restate's introspection says
	// when its workflow completed.
	settle := func(ns, id string) {
		deadline := time.Now().Add(time.Minute)
		for {
			var rows []struct {
				N int `json:"n"`
			}
			adminRows(t, s.Admin, "SELECT COUNT(*) AS n FROM sys_invocation WHERE target_service_key = '"+id+
				"' AND target_handler_name = 'Run' AND status = 'completed'", &rows)
			if len(rows) == 1 && rows[0].N == 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Work %s did not end", id)
			}
			time.Sleep(20 * time.Millisecond) // Restate's introspection: no event to wait on
		}
	}
	read := func(e *work.Engine, o work.Owner, id string, want observe.State) {
		st, _, err := e.Result(t.Context(), o, id, 0)
		if err != nil || st.State != want {
			t.Fatalf("result of %s: %+v, %v; want %s", id, st, err, want)
		}
	}
	start := func(e *work.Engine, o work.Owner, in string) string {
		ref, err := e.Start(t.Context(), spec(o, in))
		if err != nil {
			t.Fatal(err)
		}
		return ref.ID
	}
	measure(casePlain, func(e *work.Engine, o work.Owner, i int) {
		id := start(e, o, "p"+strconv.Itoa(i))
		settle("", id)
		read(e, o, id, work.StateCompleted)
	})
	measure(caseGuidance, func(e *work.Engine, o work.Owner, i int) {
		in := "g" + strconv.Itoa(i)
		id := start(e, o, in)
		for j := range 2 {
			if _, err := e.Send(t.Context(), o, id, "", "guidance "+strconv.Itoa(j)); err != nil {
				t.Fatal(err)
			}
		}
		close(proceed[in])
		settle("", id)
		read(e, o, id, work.StateCompleted)
	})
	measure(caseCancel, func(e *work.Engine, o work.Owner, i int) {
		in := "c" + strconv.Itoa(i)
		id := start(e, o, in)
		<-started[in] // running: the attempt has claimed it, its child waits
		if _, err := e.Cancel(t.Context(), o, id); err != nil {
			t.Fatal(err)
		}
		close(proceed[in])
		settle("", id)
		read(e, o, id, work.StateCancelled)
	})
	measure(casePoll, func(e *work.Engine, o work.Owner, i int) {
		id := start(e, o, "s"+strconv.Itoa(i))
		settle("", id)
		read(e, o, id, work.StateCompleted)
	}, restate.WithPollInterval(100*time.Millisecond))
	measure(caseCall, func(e *work.Engine, o work.Owner, i int) {
		if _, err := e.Call(t.Context(), spec(o, "f"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	})
	func() {
		ns := "cost" + strconv.FormatInt(namespaces.Add(1), 10)
		bw := startBare(t, s, ns+".Bare")
		retainJournals(t, s, ns+".")
		for i := range rounds {
			bw.invoke(t, "b"+strconv.Itoa(i), false)
		}
		table[caseBare] = countCost(t, s, ns+".")
	}()
	logCostTable(t, table, rounds)
	// make bench-temporal's table (runners/temporal/internal/cmd/costtable)
	// has these rows beside Temporal's.
	bare := table[caseBare]
	r := float64(rounds)
	for _, name := range []string{casePlain, caseGuidance, caseCancel, caseCall} {
		c := table[name]
		costRow("Restate: invocations per Work", name, float64(c.invocations)/r, float64(bare.invocations)/r, "")
		costRow("Restate: journal entries per Work", name, float64(c.entries)/r, float64(bare.entries)/r, "")
		costRow("Restate: journal bytes per Work", name, float64(c.journalBytes)/r, float64(bare.journalBytes)/r, "")
	}

	per := func(name string) cost { return table[name] }
	if b := per(caseBare); b.invocations != rounds || b.entries == 0 || b.entries%rounds != 0 {
		t.Fatalf("bare: %+v over %d rounds; want one invocation each, with its journal", b, rounds)
	}
	plain := per(casePlain)
	if plain.invocations%rounds != 0 || plain.entries%rounds != 0 || plain.invocations <= rounds {
		t.Fatalf("plain: %+v over %d rounds; want the same cost per Work, above a bare invocation", plain, rounds)
	}
	// Take (a boundary's guidance) keeps no completed invocation (zero
	// idempotency retention: its answer is guidance text), so Restate
	// shows none to count: one per model boundary is not in the table.
	g, c := per(caseGuidance), per(caseCancel)
	if g.byHandler["Control/Send"] != 2*rounds || g.byHandler["Control/Take"] != 0 || plain.byHandler["Control/Send"] != 0 ||
		c.byHandler["Control/Cancel"] != rounds || c.byHandler["Control/Take"] != 0 || per(caseCall).invocations != 0 {
		t.Fatalf("guidance %+v, cancel %+v, plain %+v, call %+v", g, c, plain, per(caseCall))
	}
	// A running attempt reads its Work's state every four poll intervals
	// (WithPollInterval's contract): a child running 1 s at the default
	// 100 ms is read at least once and at most 1 s / 400 ms + 1 times (a
	// read that carries changed progress counts is a Progress, else a
	// Peek).
	p := per(casePoll)
	if reads := p.byHandler["Control/Peek"] + p.byHandler["Control/Progress"]; reads < rounds || reads > (int(time.Second/(4*100*time.Millisecond))+1)*rounds {
		t.Fatalf("a child running 1 s was polled %d times over %d rounds", reads, rounds)
	}
	// A cancel races the Work's stop promise against its attempt's step:
	// the journal entries of a cancelled Work vary with which the
	// workflow sees first, its invocations do not.
	for _, name := range []string{caseGuidance, caseCancel} {
		if x := per(name); x.invocations%rounds != 0 || name != caseCancel && x.entries%rounds != 0 {
			t.Fatalf("%s: %+v over %d rounds; want the same cost per Work", name, x, rounds)
		}
	}
}

// logCostTable logs the table: per Work, the invocations and journal
// entries, and the invocations by handler.
func logCostTable(t *testing.T, table map[string]cost, rounds int) {
	var b strings.Builder
	fmt.Fprintf(&b, "per Work (%d each) | invocations | journal entries | journal bytes | state bytes left | by handler\n", rounds)
	for _, name := range []string{casePlain, caseGuidance, caseCancel, caseCall, caseBare, casePoll} {
		c := table[name]
		var hs []string
		for h, n := range c.byHandler {
			hs = append(hs, fmt.Sprintf("%s %g", h, float64(n)/float64(rounds)))
		}
		sort.Strings(hs)
		r := float64(rounds)
		fmt.Fprintf(&b, "%s | %g | %g | %g | %g | %s\n", name, float64(c.invocations)/r, float64(c.entries)/r,
			float64(c.journalBytes)/r, float64(c.stateBytes)/r, strings.Join(hs, ", "))
	}
	t.Log("\n" + b.String())
}

// costRow prints one row of make bench-temporal's table, in the format
// of runners/temporal's (tab-separated: section, case, ours, bare, goal),
// when AGENTWORK_RESTATE_COST asks for the measurement (a plain test run
// prints none).
func costRow(section, name string, ours, bare float64, goal string) {
	if os.Getenv("AGENTWORK_RESTATE_COST") == "" {
		return
	}
	fmt.Printf("costrow\t%s\t%s\t%.4g\t%.4g\t%s\n", section, name, ours, bare, goal)
}
