//go:build integration

package dashboards

import (
	"context"
	"os"
	"os/exec"
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

// browserCheck loads the status page in a real headless Chromium, asserts
// on the rendered DOM and saves a screenshot to shot.
func browserCheck(t *testing.T, pageURL, shot string) {
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
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("status page in Chromium: title %q, slots %s/%s, queued %s, targets %v; screenshot %s", title, slots, limit, queue, targets, shot)
	if title != "agentwork status" || strings.TrimSpace(limit) == "" || limit == "0" || strings.TrimSpace(slots) == "" || strings.TrimSpace(queue) == "" {
		t.Errorf("rendered page: title %q slots %q limit %q queue %q", title, slots, limit, queue)
	}
	for _, want := range []string{"research_web", "research_papers", "fetch_dataset"} {
		if !strings.Contains(strings.Join(targets, " "), want) {
			t.Errorf("rendered targets %v lack %s", targets, want)
		}
	}
	for _, want := range []string{"queued", "running", "cancel-requested", "completed", "failed", "cancelled"} {
		if !strings.Contains(strings.Join(states, " "), want) {
			t.Errorf("rendered state columns %v lack %s", states, want)
		}
	}
}
