package harness

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// The test binary is also the coordinator it drives (HARNESS_CHILD=1).
func TestMain(m *testing.M) {
	if os.Getenv("HARNESS_CHILD") == "1" {
		os.Exit(Serve(os.Stdin, os.Stdout, slog.New(slog.NewTextHandler(os.Stderr, nil)), func(f []string) (any, error) {
			switch f[0] {
			case "echo":
				return map[string]string{"said": Arg(f, 1) + "|" + Arg(f, 3)}, nil
			case "result":
				return Result{Status: Status{State: "completed"}, Result: "out " + Arg(f, 1)}, nil
			case "start":
				return map[string]string{"work": "w-" + Arg(f, 1)}, nil
			}
			return nil, driver.Detail(work.ErrInvalidSpec, "unknown command")
		}))
	}
	goleak.VerifyTestMain(m)
}

func TestCoordinatorProtocol(t *testing.T) {
	t.Setenv("HARNESS_CHILD", "1")
	ps := &Procs{Dir: t.TempDir()}
	defer ps.StopAll()
	co, err := ps.StartCoordinator("co", os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	var said struct{ Said string }
	if err := co.Do(&said, "echo", "a", "b", "c d e"); err != nil || said.Said != "a|c d e" {
		t.Fatalf("echo: %+v %v (the fourth word is the rest of the line)", said, err)
	}
	if err := co.Do(nil, "nonsense"); err == nil || !strings.Contains(err.Error(), "invalid_spec") {
		t.Fatalf("an unknown command's answer is its error: %v", err)
	}
	if id, err := co.Start("echo", "x"); err != nil || id != "w-echo" {
		t.Fatalf("start: %q %v", id, err)
	}
	if r, err := co.Settled("w1", time.Minute); err != nil || r.Result != "out w1" || !IsTerminal(r.Status.State) {
		t.Fatalf("settled: %+v %v", r, err)
	}
	if p, ok := ps.Named("co"); !ok || p != co.P {
		t.Fatal("Named finds the live coordinator")
	}
	co.P.Kill()
	if !co.P.Exited() {
		t.Fatal("Kill waits for the exit")
	}
	if _, ok := ps.Named("co"); ok {
		t.Fatal("Named finds no dead process")
	}
	if err := co.Do(nil, "echo"); err == nil {
		t.Fatal("a dead coordinator answers nothing")
	}
	if len(ps.All()) != 1 {
		t.Fatalf("All: %d", len(ps.All()))
	}
	// The log holds the commands and the error code, not the answers.
	b, err := os.ReadFile(filepath.Join(ps.Dir, "co.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "code=invalid_spec") || !strings.Contains(string(b), "stdout: {\"said\":\"a|c d e\"}") {
		t.Fatalf("log:\n%s", b)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "stdout: ") && strings.Contains(l, "unknown command") {
			t.Fatalf("the log carries the error's text: %s", l)
		}
	}
}

func TestSpawnFails(t *testing.T) {
	ps := &Procs{Dir: t.TempDir()}
	if _, err := ps.Spawn("x", nil, filepath.Join(ps.Dir, "no-such-binary")); err == nil {
		t.Fatal("a missing binary")
	}
	ps.Dir = filepath.Join(ps.Dir, "no-such-dir")
	if _, err := ps.Spawn("x", nil, os.Args[0]); err == nil {
		t.Fatal("a log directory that does not exist")
	}
	if port, err := FreePort(); err != nil || port == 0 {
		t.Fatalf("FreePort: %d %v", port, err)
	}
	if addr, err := FreeAddr(); err != nil || !strings.HasPrefix(addr, "127.0.0.1:") || addr == "127.0.0.1:0" {
		t.Fatalf("FreeAddr: %q %v", addr, err)
	}
}

func TestTracerProviderWritesEveryEndedSpan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spans")
	tp, err := TracerProvider(path)
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tp.Tracer("t").Start(context.Background(), "invoke_agent research")
	sp.AddEvent("agentwork.work.completed")
	sp.End()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.HasPrefix(got, "invoke_agent research") || !strings.Contains(got, "event:agentwork.work.completed") {
		t.Fatalf("span file: %q", got)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := TracerProvider(filepath.Join(path, "under-a-file")); err == nil {
		t.Fatal("an unwritable path")
	}
	if tp, err := TracerProvider(""); err != nil || tp == nil {
		t.Fatal("no path: a provider that keeps nothing")
	} else if !errors.Is(tp.Shutdown(context.Background()), nil) {
		t.Fatal("shutdown")
	}
}
