//go:build integration

package dashboards

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumBin finds Debian's chromium (CHROMIUM_BIN overrides).
func chromiumBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM_BIN"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: `apt-get install -y chromium` (.ci/integration does), or set CHROMIUM_BIN")
	return ""
}

// browserExpect is what the rendered status page must show beyond its
// summary and state columns: these target rows, and these live Work rows
// (id, target and state, each in its cell).
type browserExpect struct {
	targets []string
	work    []heldWork
}

// browserCheck loads the status page in a real headless Chromium, asserts
// on the rendered DOM and saves a screenshot to shot.
func browserCheck(t *testing.T, pageURL, shot string, want browserExpect) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumBin(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitVisible(`#slots-in-use`)); err != nil {
		t.Fatalf("chromium: load %s: %v", pageURL, err)
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("chromium: text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	list := func(js string) []string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatalf("chromium: %s: %v", js, err)
		}
		return v
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	slots, limit, queue := text(`#slots-in-use`), text(`#slots-limit`), text(`#queue-length`)
	targets := list(`Array.from(document.querySelectorAll('#targets tbody tr[data-target]')).map(r => r.dataset.target)`)
	states := list(`Array.from(document.querySelectorAll('#targets thead th')).map(h => h.textContent)`)
	// Each live Work row as "id|target|state", read from the rendered
	// cells (the state cell may add " for 1m0s" to cancel-requested Work).
	rows := list(`Array.from(document.querySelectorAll('#work tbody tr[data-id]')).map(r => [r.dataset.id, r.cells[0].textContent.trim(), r.cells[1].textContent.trim(), r.cells[3].textContent.trim()].join('|'))`)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("status page in Chromium: title %q, slots %s/%s, queued %s, targets %v, live work %v; screenshot %s", title, slots, limit, queue, targets, rows, shot)
	if title != "agentwork status" || strings.TrimSpace(limit) == "" || limit == "0" || strings.TrimSpace(slots) == "" || strings.TrimSpace(queue) == "" {
		t.Errorf("rendered page: title %q slots %q limit %q queue %q", title, slots, limit, queue)
	}
	for _, tg := range want.targets {
		if !slices.Contains(targets, tg) {
			t.Errorf("rendered targets %v lack %s", targets, tg)
		}
	}
	for _, w := range want.work {
		found := false
		for _, r := range rows {
			f := strings.Split(r, "|")
			if len(f) == 4 && f[0] == w.ID && f[1] == w.ID && f[2] == w.Target && strings.HasPrefix(f[3], w.State) {
				found = true
			}
		}
		if !found {
			t.Errorf("rendered live work rows %v lack id %s, target %s, state %s", rows, w.ID, w.Target, w.State)
		}
	}
	if len(want.work) > 0 && len(rows) != len(want.work) {
		t.Errorf("rendered %d live work rows %v, want %d", len(rows), rows, len(want.work))
	}
	for _, want := range []string{"queued", "running", "cancel-requested", "completed", "failed", "cancelled"} {
		if !strings.Contains(strings.Join(states, " "), want) {
			t.Errorf("rendered state columns %v lack %s", states, want)
		}
	}
}
