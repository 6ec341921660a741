package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

var echoTargets = map[string]temporal.Child{
	"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
}

// startDone starts an echo Work for o and waits until it completed.
func startDone(t *testing.T, eng *work.Engine, o work.Owner, in string) string {
	t.Helper()
	ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
		Input: in, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	st, out, err := eng.Result(t.Context(), o, ref.ID, work.MaxResultWait)
	if err != nil || st.State != work.StateCompleted || out != in {
		t.Fatalf("Work %s: %s %q %v", ref.ID, st.State, out, err)
	}
	return ref.ID
}

// listed returns the ids List shows o.
func listed(t *testing.T, eng *work.Engine, o work.Owner) []string {
	t.Helper()
	list, err := eng.List(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, st := range list {
		ids = append(ids, st.Work.ID)
	}
	return ids
}

// registryIDs returns the ids o's registry holds, read with no age applied
// (straight from its records query).
func registryIDs(t *testing.T, o work.Owner) []string {
	t.Helper()
	v, err := server(t).QueryWorkflow(t.Context(), "agentwork-owner/"+o.ID(), "", "records")
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct{ ID string }
	if err := v.Get(&recs); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestRetentionAge: with a large count and a short age, a finished Work
// is visible, then, once older than the age, not_found and gone from List
// (hidden by the Engine's read path before the registry's next update),
// and the registry itself drops it at its next update; its history, with
// the evictions by workflow time, replays.
func TestRetentionAge(t *testing.T) {
	const age = 2 * time.Second
	eng, _ := deploy(t, "retain-age", echoTargets, nil, []temporal.Option{temporal.WithOptions(work.WithRetention(100, age))})
	o := work.NewOwner(fmt.Sprintf("retain-age-%d", time.Now().UnixNano()))
	old := startDone(t, eng, o, "old")
	if _, err := eng.Status(t.Context(), o, old); err != nil {
		t.Fatalf("Status right after it finished: %v", err)
	}
	if ids := listed(t, eng, o); !slices.Contains(ids, old) {
		t.Fatalf("List right after it finished: %v, want %s", ids, old)
	}
	// Polled: not_found once past the age, and never before the age.
	finished := time.Now()
	deadline := finished.Add(age + 30*time.Second)
	for {
		_, err := eng.Status(t.Context(), o, old)
		if errors.Is(err, work.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Work %s still visible %v after it finished (age %v)", old, time.Since(finished), age)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e := time.Since(finished); e < age-time.Second {
		t.Fatalf("Work gone after %v, before its age %v", e, age)
	}
	if ids := listed(t, eng, o); slices.Contains(ids, old) {
		t.Fatalf("List after the age: %v, still has %s", ids, old)
	}
	settled, err := boundary.Settled(t.Context(), eng, o)
	if err != nil || len(settled) != 0 {
		t.Fatalf("Settled after the age: %v %v", settled, err)
	}
	// The next update (an admission, the new Work's transition records)
	// evicts it from the registry; the new Work is visible.
	fresh := startDone(t, eng, o, "fresh")
	if ids := registryIDs(t, o); slices.Contains(ids, old) || !slices.Contains(ids, fresh) {
		t.Fatalf("registry after an update: %v, want %s and not %s", ids, fresh, old)
	}
	if ids := listed(t, eng, o); !slices.Equal(ids, []string{fresh}) {
		t.Fatalf("List: %v, want [%s]", ids, fresh)
	}
	if err := temporal.ReplayOwner(workHistory(t, server(t), "agentwork-owner/"+o.ID())); err != nil {
		t.Fatalf("replaying the registry: %v", err)
	}
}

// TestRetentionCount: with no age bound, the count still evicts the
// oldest finished Work as each Work finishes, and nothing expires by age.
func TestRetentionCount(t *testing.T) {
	eng, _ := deploy(t, "retain-count", echoTargets, nil, []temporal.Option{temporal.WithOptions(work.WithRetention(2, 0))})
	o := work.NewOwner(fmt.Sprintf("retain-count-%d", time.Now().UnixNano()))
	var ids []string
	for i := range 3 {
		ids = append(ids, startDone(t, eng, o, fmt.Sprint(i)))
	}
	if _, err := eng.Status(t.Context(), o, ids[0]); !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("Status of the oldest beyond the count: %v, want not_found", err)
	}
	for _, id := range ids[1:] {
		if _, err := eng.Status(t.Context(), o, id); err != nil {
			t.Fatalf("Status of %s: %v", id, err)
		}
	}
	if got := listed(t, eng, o); len(got) != 2 || slices.Contains(got, ids[0]) {
		t.Fatalf("List: %v, want %v", got, ids[1:])
	}
}

// TestRegistryReplaysPreAgeHistory: a registry history recorded before the
// age bound existed (three admissions and the count evicting one, with no
// RetainAge in its state or requests) replays on this code: the zero age
// takes the path it took.
func TestRegistryReplaysPreAgeHistory(t *testing.T) {
	f, err := os.Open("testdata/owner-history-v0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := temporal.ReplayOwner(h); err != nil {
		t.Fatalf("replaying: %v", err)
	}
}
