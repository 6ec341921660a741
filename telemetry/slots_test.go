package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

// blockedQueue builds a queue held up by a cancel-requested Work: limit 2,
// one running Work, one cancel-requested Work whose child ignores its
// context, and one queued Work. It returns the stuck Work's id and a
// function that lets every child return.
func blockedQueue(t *testing.T, h *harness) (stuck string, release func()) {
	t.Helper()
	done := make(chan struct{})
	started := make(chan struct{}, 2)
	block := func(context.Context) (string, error) { started <- struct{}{}; <-done; return "out " + canaryText, nil }
	if _, err := h.launch(context.Background(), researcher, work.Spec{Run: block}); err != nil {
		t.Fatal(err)
	}
	stuck, err := h.launch(context.Background(), summarizer, work.Spec{Run: block})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	<-started
	if _, err := h.s.Send(t.Context(), h.owner, stuck, "call_1", "guidance "+canaryText); err == nil {
		t.Fatal("send to a function child accepted")
	}
	h.clk.Advance(30 * time.Second)
	if _, err := h.s.Cancel(t.Context(), h.owner, stuck); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(90 * time.Second)
	if _, err := h.launch(context.Background(), researcher, work.Spec{Run: block}); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(4 * time.Minute)
	var once sync.Once
	return stuck, func() { once.Do(func() { close(done) }) }
}

const canaryText = "CANARY-status-5e1d"

// TestSlotsAndOldestAges: a cancel-requested Work counts as a slot in use,
// and the oldest queued and oldest cancel-requested ages are those of the
// same, still-waiting Work.
func TestSlotsAndOldestAges(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(2))
	stuck, release := blockedQueue(t, h)
	defer release()
	var got []string
	for _, s := range series(h.collect()) {
		for _, p := range []string{"agentwork.work.slots_in_use", "agentwork.work.concurrency_limit", "agentwork.work.oldest_", "agentwork.work.items{state=running", "agentwork.work.items{state=cancel-requested", "agentwork.work.items{state=queued"} {
			if strings.HasPrefix(s, p) {
				got = append(got, s)
			}
		}
	}
	want := []string{
		"agentwork.work.concurrency_limit{target=*} 2",
		"agentwork.work.items{state=cancel-requested,target=researcher} 0",
		"agentwork.work.items{state=cancel-requested,target=summarizer} 1",
		"agentwork.work.items{state=queued,target=researcher} 1",
		"agentwork.work.items{state=queued,target=summarizer} 0",
		"agentwork.work.items{state=running,target=researcher} 1",
		"agentwork.work.items{state=running,target=summarizer} 0",
		"agentwork.work.oldest_approval_age{target=researcher} 0",
		"agentwork.work.oldest_approval_age{target=summarizer} 0",
		"agentwork.work.oldest_cancel_requested_age{target=researcher} 0",
		"agentwork.work.oldest_cancel_requested_age{target=summarizer} 330",
		"agentwork.work.oldest_queued_age{target=researcher} 240",
		"agentwork.work.oldest_queued_age{target=summarizer} 0",
		"agentwork.work.slots_in_use{target=researcher} 1",
		"agentwork.work.slots_in_use{target=summarizer} 1",
	}
	diff(t, "gauges", strings.Join(got, "\n"), strings.Join(want, "\n"))

	p := h.obs.Status()
	if p.Slots != (telemetry.StatusSlots{InUse: 2, Limit: 2}) {
		t.Errorf("slots %+v", p.Slots)
	}
	if p.Queue.Length != 1 || p.Queue.OldestAgeSeconds != 240 || len(p.Work) != 3 || p.More != 0 {
		t.Errorf("status %+v", p)
	}
	var w telemetry.StatusWork
	for _, r := range p.Work {
		if r.ID == stuck {
			w = r
		}
	}
	if w.ID != stuck || w.State != "cancel-requested" || w.CancelRequestedSeconds != 330 || w.ElapsedSeconds != 360 || w.Attempt != 1 || w.Owner != "coordinator" {
		t.Errorf("stuck row %+v", w)
	}
}

// TestStatusHandler serves the page as HTML and as JSON, with no content.
func TestStatusHandler(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(2))
	stuck, release := blockedQueue(t, h)
	defer release()
	srv := httptest.NewServer(h.obs.StatusHandler())
	defer srv.Close()
	get := func(path, accept string) (string, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}
	ct, page := get("/", "text/html")
	for _, want := range []string{`<meta http-equiv="refresh" content="5">`, `id="slots-in-use" class="full">2</b>`, `id="slots-limit">2</b>`,
		`id="queue-length">1</b>`, `id="queue-oldest">4m0s</b>`, `data-id="` + stuck + `" data-state="cancel-requested"`, `cancel-requested for 5m30s`} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q:\n%s", want, page)
		}
	}
	if !strings.HasPrefix(ct, "text/html") {
		t.Errorf("content type %q", ct)
	}
	for _, accept := range []string{"application/json"} {
		ct, body := get("/?format=json", accept)
		var p struct {
			Slots struct{ InUse, Limit int }
			Queue struct {
				Length           int
				OldestAgeSeconds float64
			}
			Targets []struct {
				Target string
				States map[string]int
			}
			Work []struct{ ID, State string }
		}
		if err := json.Unmarshal([]byte(body), &p); err != nil || ct != "application/json" {
			t.Fatalf("JSON %q: %v\n%s", ct, err, body)
		}
		if p.Slots.InUse != 2 || p.Slots.Limit != 2 || p.Queue.Length != 1 || p.Queue.OldestAgeSeconds != 240 ||
			len(p.Targets) != 2 || p.Targets[1].States["cancel-requested"] != 1 || len(p.Work) != 3 {
			t.Errorf("JSON = %+v", p)
		}
	}
	if _, body := get("/", "application/json"); !strings.HasPrefix(body, "{") {
		t.Errorf("Accept: application/json got %q", body[:20])
	}
	release()
	h.await(stuck, work.StateCompleted) // the child returned its output after the cancel: completion wins
	_, page = get("/", "")
	_, js := get("/?format=json", "")
	if strings.Contains(page+js, canaryText) {
		t.Error("the status page shows content")
	}
	resp, err := http.Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %s", resp.Status)
	}
}
