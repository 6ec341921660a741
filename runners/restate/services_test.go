package restate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// TestServiceTimeouts: every service a Worker registers has inactivity
// and abort timeouts above the Work's maximum duration (and at least a
// day), the one WithDefaultBudget sets, read back from the admin API, so that Restate never aborts and
// retries a long child; the registry objects keep no journal.
func TestServiceTimeouts(t *testing.T) {
	s := server(t)
	ns := "tmo" + strconv.FormatInt(namespaces.Add(1), 10)
	w, err := restate.NewWorker(map[string]restate.Child{"c": {Kind: work.KindFunction,
		Run: func(context.Context, string) (string, error) { return "", nil }}},
		restate.WithServicePrefix(ns), restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin),
		restate.WithRegistry(), restate.WithOptions(work.WithDefaultBudget(work.Budget{MaxDuration: 36 * time.Hour})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, svc := range []string{ns + ".Work.c", ns + ".Owner", ns + ".Control", ns + ".Approvals"} {
		resp, err := http.Get(s.Admin + "/services/" + svc)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		var d map[string]any
		if err := json.Unmarshal(b, &d); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s %s", svc, resp.Status, b)
		}
		for _, k := range []string{"inactivity_timeout", "abort_timeout"} {
			got, err := humantime(d[k])
			if err != nil || got < 37*time.Hour {
				t.Errorf("%s: %s = %v (%v); want at least 37h", svc, k, d[k], err)
			}
		}
		if svc != ns+".Work.c" {
			if j, err := humantime(d["journal_retention"]); err != nil || j != 0 {
				t.Errorf("%s: journal_retention = %v; want none", svc, d["journal_retention"])
			}
		}
	}
}

// humantime parses the admin API's durations ("1d 13h", "37h", "0s").
func humantime(v any) (time.Duration, error) {
	s, _ := v.(string)
	var total time.Duration
	for _, tok := range strings.Fields(s) {
		n, unit := strings.TrimRightFunc(tok, unicode.IsLetter), strings.TrimLeftFunc(tok, unicode.IsDigit)
		mult := map[string]time.Duration{"w": 7 * 24 * time.Hour, "d": 24 * time.Hour}[unit]
		if mult == 0 {
			d, err := time.ParseDuration(tok)
			if err != nil {
				return 0, err
			}
			total += d
			continue
		}
		k, err := strconv.Atoi(n)
		if err != nil {
			return 0, err
		}
		total += time.Duration(k) * mult
	}
	if s == "" {
		return 0, fmt.Errorf("no duration")
	}
	return total, nil
}

// TestUnknownTarget: a Start for a target no Worker registered is refused
// (work.ErrInvalidSpec) and leaves its owner's registry free for the next
// Start.
func TestUnknownTarget(t *testing.T) {
	e := deploy(t, map[string]restate.Child{"c": {Kind: work.KindFunction,
		Run: func(_ context.Context, in string) (string, error) { return in, nil }}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := work.NewOwner("unknown-" + newToken())
	spec := func(label string) work.Spec {
		return work.Spec{Owner: o, Target: work.Target{Label: label, Kind: work.KindFunction}, Input: "x",
			Run: func(context.Context) (string, error) { return "", nil }}
	}
	if _, err := e.Start(ctx, spec("nope")); !errors.Is(err, work.ErrInvalidSpec) {
		t.Fatalf("Start(unregistered target) = %v; want ErrInvalidSpec", err)
	}
	ref, err := e.Start(ctx, spec("c"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, out, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			if st.State != work.StateCompleted || out != "x" {
				t.Fatalf("%+v %q", st, out)
			}
			return
		}
	}
}

// TestRetentionForgets: a Work its owner's registry evicts (retention)
// leaves Restate's state (its control object, output included) while the
// retained one keeps it.
func TestRetentionForgets(t *testing.T) {
	s := server(t)
	e := deploy(t, map[string]restate.Child{"c": {Kind: work.KindFunction,
		Run: func(_ context.Context, in string) (string, error) { return "out-" + in, nil }}}, restate.WithOptions(work.WithRetention(1, 0)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := work.NewOwner("retain-" + newToken())
	run := func(in string) work.Ref {
		ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "c", Kind: work.KindFunction}, Input: in,
			Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		for {
			st, _, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
			if err != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				return ref
			}
		}
	}
	first := run("a")
	second := run("b")
	rows := func(id string) string {
		return query(t, s.Admin, "SELECT key FROM state WHERE service_name LIKE '%.Control' AND service_key = '"+id+"'")
	}
	for strings.Contains(rows(first.ID), `"key"`) {
		if ctx.Err() != nil {
			t.Fatalf("the evicted Work's control state is still there: %s", rows(first.ID))
		}
		time.Sleep(20 * time.Millisecond) // polling Restate's state for the one-way forget
	}
	if !strings.Contains(rows(second.ID), `"key"`) {
		t.Fatalf("the retained Work's control state is gone: %s", rows(second.ID))
	}
	if _, err := e.Status(ctx, o, first.ID); !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("Status(evicted) = %v; want ErrNotFound", err)
	}
	if _, out, err := e.Result(ctx, o, second.ID, 0); err != nil || out != "out-b" {
		t.Fatalf("Result(retained) = %q, %v", out, err)
	}
}
