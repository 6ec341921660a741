package work_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func TestJSONGoldens(t *testing.T) {
	ref := work.Ref{ID: "5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e", TargetID: "researcher"}
	created := time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.UTC)
	started := created.Add(1500 * time.Millisecond)
	finished := started.Add(2*time.Minute + 3*time.Millisecond)
	nonUTC := time.FixedZone("X", 2*3600)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"ref", ref,
			`{"kind":"work.ref","id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","targetId":"researcher","guarantees":{"execution":"process-local","rejoin":"process-local"}}`},
		{"status/queued", work.Status{Work: ref, TargetLabel: "research", State: work.StateQueued, CreatedAt: created},
			`{"work":{"kind":"work.ref","id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","targetId":"researcher","guarantees":{"execution":"process-local","rejoin":"process-local"}},"targetLabel":"research","state":"queued","attachment":"attached","attempt":1,"createdAt":"2026-03-04T05:06:07.891Z","resultAvailable":false}`},
		{"status/running", work.Status{Work: ref, TargetLabel: "research", State: work.StateRunning, CreatedAt: created, StartedAt: started},
			`{"work":{"kind":"work.ref","id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","targetId":"researcher","guarantees":{"execution":"process-local","rejoin":"process-local"}},"targetLabel":"research","state":"running","attachment":"attached","attempt":1,"createdAt":"2026-03-04T05:06:07.891Z","startedAt":"2026-03-04T05:06:09.391Z","resultAvailable":false}`},
		{"status/completed", work.Status{Work: ref, TargetLabel: "research", State: work.StateCompleted, CreatedAt: created, StartedAt: started, FinishedAt: finished, ResultAvailable: true},
			`{"work":{"kind":"work.ref","id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","targetId":"researcher","guarantees":{"execution":"process-local","rejoin":"process-local"}},"targetLabel":"research","state":"completed","attachment":"attached","attempt":1,"createdAt":"2026-03-04T05:06:07.891Z","startedAt":"2026-03-04T05:06:09.391Z","finishedAt":"2026-03-04T05:08:09.394Z","resultAvailable":true}`},
		{"status/cancelled-from-queue", work.Status{Work: ref, TargetLabel: "research", State: work.StateCancelled, CreatedAt: created.In(nonUTC), FinishedAt: finished.In(nonUTC)},
			`{"work":{"kind":"work.ref","id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","targetId":"researcher","guarantees":{"execution":"process-local","rejoin":"process-local"}},"targetLabel":"research","state":"cancelled","attachment":"attached","attempt":1,"createdAt":"2026-03-04T05:06:07.891Z","finishedAt":"2026-03-04T05:08:09.394Z","resultAvailable":false}`},
		{"cancel-receipt", work.CancelReceipt{WorkID: ref.ID, Accepted: true, State: work.StateCancelRequested, AcceptedAt: started},
			`{"workId":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","accepted":true,"state":"cancel-requested","acceptedAt":"2026-03-04T05:06:09.391Z"}`},
		{"cancel-receipt/not-accepted", work.CancelReceipt{WorkID: ref.ID, State: work.StateFailed, AcceptedAt: finished},
			`{"workId":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","accepted":false,"state":"failed","acceptedAt":"2026-03-04T05:08:09.394Z"}`},
		{"send-receipt", work.SendReceipt{WorkID: ref.ID, ID: ref.ID + ".2", Cursor: "2", AcceptedAt: started},
			`{"workId":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e.2","cursor":"2","acceptedAt":"2026-03-04T05:06:09.391Z","outcome":"accepted"}`},
		{"detach-receipt", work.DetachReceipt{ID: ref.ID},
			`{"id":"5f0c6a1e9b2d4c7f8a3e1d0b9c8a7f6e","detached":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestRefFromStart(t *testing.T) {
	h := newHarness(t)
	hex := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for i := range 20 {
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: work.Target{Label: "research", ID: "researcher-v2", Kind: work.KindAgent},
			Run: immediate("x")})
		if err != nil {
			t.Fatal(err)
		}
		if !hex.MatchString(ref.ID) || seen[ref.ID] {
			t.Fatalf("id %d %q: not 128-bit hex or repeated", i, ref.ID)
		}
		seen[ref.ID] = true
		if ref.TargetID != "researcher-v2" || work.RefKind(ref) != "work.ref" || ref.Durable {
			t.Fatalf("ref = %+v", ref)
		}
		h.obs.waitTerminal(ref.ID)
	}
}

func TestStateTable(t *testing.T) {
	legal := map[[2]observe.State]bool{
		{work.StateQueued, work.StateRunning}:            true,
		{work.StateQueued, work.StateCancelled}:          true,
		{work.StateRunning, work.StateCompleted}:         true,
		{work.StateRunning, work.StateFailed}:            true,
		{work.StateRunning, work.StateCancelRequested}:   true,
		{work.StateCancelRequested, work.StateCompleted}: true,
		{work.StateCancelRequested, work.StateFailed}:    true,
		{work.StateCancelRequested, work.StateCancelled}: true,
	}
	all := append(observe.States[:], "", "bogus")
	for _, from := range all {
		for _, to := range all {
			if got := work.CanTransition(from, to); got != legal[[2]observe.State{from, to}] {
				t.Errorf("CanTransition(%q, %q) = %v", from, to, got)
			}
		}
	}
	for _, s := range observe.States {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		if s.Terminal() != (s == work.StateCompleted || s == work.StateFailed || s == work.StateCancelled) {
			t.Errorf("%s Terminal wrong", s)
		}
	}
	if observe.State("bogus").Valid() {
		t.Error("bogus is valid")
	}
	if work.KindAgent.String() != "agent" || work.KindFunction.String() != "function" || observe.Kind(9).String() != "unknown" {
		t.Error("Kind.String")
	}
}

// A durable Engine's Ref says so, and a Status reports real attempts; the
// zero values keep the in-process contract.
func TestDurableRefAndAttempt(t *testing.T) {
	ref := work.Ref{ID: "0123456789abcdef0123456789abcdef", TargetID: "t", Durable: true}
	b, _ := json.Marshal(ref)
	if want := `{"kind":"work.ref","id":"0123456789abcdef0123456789abcdef","targetId":"t","guarantees":{"execution":"durable","rejoin":"durable"}}`; string(b) != want {
		t.Fatalf("durable ref = %s, want %s", b, want)
	}
	for _, tc := range []struct{ attempt, want int }{{0, 1}, {1, 1}, {3, 3}} {
		b, _ := json.Marshal(work.Status{Work: ref, State: work.StateRunning, Attempt: tc.attempt})
		var v struct{ Attempt int }
		_ = json.Unmarshal(b, &v)
		if v.Attempt != tc.want {
			t.Errorf("Attempt %d: JSON attempt = %d, want %d", tc.attempt, v.Attempt, tc.want)
		}
	}
}
