package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalShutdown sends SIGTERM to the real demo process while its
// background work runs (-hold keeps the coordinator waiting after its
// launches): the demo drains with Engine.Shutdown, cancels what is
// left after -drain, prints the content-free report, logs it through slog
// and exits 0.
func TestSignalShutdown(t *testing.T) {
	bin := buildDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-hold", "-drain", "300ms", "-canary", canary)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	held := false
	for !held && sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		held = sc.Text() == "holding until interrupted"
	}
	if !held {
		_ = cmd.Wait()
		t.Fatalf("the demo never held:\n%s\n%s", out.String(), stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	out.Write(rest)
	err = cmd.Wait()
	got := out.String()
	if err != nil {
		t.Fatalf("demo exited with %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, got, stderr.String())
	}
	if !strings.Contains(got, "\ninterrupted\n") {
		t.Errorf("no interruption line:\n%s", got)
	}
	// research_web and fetch_dataset wait for the coordinator, which was
	// interrupted: the drain times out and Shutdown cancels them.
	report := regexp.MustCompile(`(?m)^drained=false duration=\S+ settled=\[(.*)\] orphaned=\[\]$`).FindStringSubmatch(got)
	if report == nil {
		t.Fatalf("no shutdown report:\n%s", got)
	}
	for _, want := range []string{"research_web/cancelled=1", "research_papers/cancelled=1", "fetch_dataset/"} {
		if !strings.Contains(report[1], want) {
			t.Errorf("report %q lacks %s", report[0], want)
		}
	}
	if !strings.Contains(stderr.String(), `msg="work engine shut down" report.drained=false`) ||
		!strings.Contains(stderr.String(), "report.orphans=0") {
		t.Errorf("the report was not logged:\n%s", stderr.String())
	}
	if strings.Contains(report[0]+stderr.String(), canary) {
		t.Errorf("content in the report or the logs")
	}
}
