package work_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// TestDocumentedDefaults holds the defaults to the values the options'
// doc comments give (the defaults are not exported: the documentation is
// where a user reads them).
func TestDocumentedDefaults(t *testing.T) {
	l, err := work.ResolveLimits()
	if err != nil {
		t.Fatal(err)
	}
	want := work.Limits{MaxRunning: 8, MaxOutstanding: 32, MaxStarts: 64, MaxDepth: 4,
		MaxDuration: 30 * time.Minute, MaxResultBytes: 1 << 20, RetainTerminal: 64,
		MaxMessageBytes: 16 << 10, MaxQueuedGuidance: 32, MaxQueuedGuidanceBytes: 64 << 10,
		MaxCommandRecords: 256, Observer: observe.NopObserver{}, StatusRows: l.StatusRows, SnapshotInterval: l.SnapshotInterval}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("ResolveLimits() = %+v\nwant the documented %+v", l, want)
	}
	if got := driver.ResolveUpdates(work.UpdatePolicy{}); got != (work.UpdatePolicy{MaxUpdates: 32, MaxBytes: 16 << 10, QuestionTimeout: 10 * time.Minute}) {
		t.Errorf("ResolveUpdates(UpdatePolicy{}) = %+v; want 32 updates, 16 KiB, 10 minutes", got)
	}
	if got := contract.ApprovalWait(0); got != 24*time.Hour {
		t.Errorf("the approval wait of a Spec without ApprovalTimeout = %v; want the documented 24 hours", got)
	}
	if got := contract.ApprovalWait(time.Minute); got != time.Minute {
		t.Errorf("the approval wait = %v; want the Spec's minute", got)
	}
	j := driver.ResolveJob(work.Job{})
	if j.MaxPolls != 8 || j.MaxPollErrors != 3 || j.Backoff != (work.Backoff{Initial: time.Second, Max: 30 * time.Second}) {
		t.Errorf("ResolveJob(Job{}) = polls %d, errors %d, backoff %+v; want 8, 3, 1 s doubling to 30 s", j.MaxPolls, j.MaxPollErrors, j.Backoff)
	}
	if j := driver.ResolveJob(work.Job{Backoff: work.Backoff{Initial: time.Minute}}); j.Backoff.Max != time.Minute {
		t.Errorf("Backoff{Initial: 1m} resolves its Max to %v; want 1m (the default, or Initial when longer)", j.Backoff.Max)
	}
	s := work.New()
	defer s.Close(t.Context())
	b := s.EffectiveBudget(work.Spec{})
	if b.MaxTurns != 50 || b.MaxToolCalls != 100 || b.MaxTokens != 0 || b.MaxDuration != 30*time.Minute {
		t.Errorf("the default budget = %+v; want 50 turns, 100 tool calls, no token limit, 30 minutes", b)
	}
}

// TestPollFailedClass: a failed poll's class is kept only when it is a
// class name; text, ids and the empty class end as ClassError.
func TestPollFailedClass(t *testing.T) {
	for class, want := range map[string]string{
		"": work.ClassError, "quota": "quota", "quota_2": "quota_2", "q": "q",
		strings.Repeat("a", 32): strings.Repeat("a", 32), strings.Repeat("a", 33): work.ClassError,
		"Quota": work.ClassError, "9lives": work.ClassError, "_x": work.ClassError, "a-b": work.ClassError,
		"a b": work.ClassError, "job 1234 failed": work.ClassError, "é": work.ClassError,
	} {
		if got := work.PollClassForTest(class); got != want {
			t.Errorf("the class of a failed poll of class %q = %q, want %q", class, got, want)
		}
	}
}
