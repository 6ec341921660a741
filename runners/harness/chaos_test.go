package harness

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProxyCut: a cut holds the bytes of both directions and of a new
// connection, without closing anything; a resume delivers them.
func TestProxyCut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }() // echo
		}
	}()
	p, err := NewProxy(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.Addr, "127.0.0.1:") {
		t.Fatalf("proxy address %s", p.Addr)
	}
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	echo := func(msg string) (string, error) {
		if _, err := c.Write([]byte(msg + "\n")); err != nil {
			return "", err
		}
		return r.ReadString('\n')
	}
	if got, err := echo("before"); err != nil || got != "before\n" {
		t.Fatalf("before the cut: %q %v", got, err)
	}
	p.Cut()
	if _, err := c.Write([]byte("during\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if got, err := r.ReadString('\n'); err == nil {
		t.Fatalf("an answer came through the cut: %q", got)
	}
	c2, err := net.Dial("tcp", p.Addr) // accepted, held
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	p.Resume()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "during\n" {
		t.Fatalf("after the cut: %q %v", got, err)
	}
	_ = c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := bufio.NewReader(c2).ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("the connection made during the cut: %q %v", got, err)
	}
}

// TestTallyChecks: each check fails on the Work or call it is about and
// passes on the rest.
func TestTallyChecks(t *testing.T) {
	ok := Seen{ID: "ok", Found: true, State: "completed", Attempt: 1, Starts: 1, Notify: true, Notices: 1}
	for _, c := range []struct {
		name  string
		seen  Seen
		call  *ModelCall
		check string
	}{
		{"not found", Seen{ID: "x", Notify: true}, nil, CheckLost},
		{"never ended", Seen{ID: "x", Found: true, State: "running"}, nil, CheckLost},
		{"ran twice", Seen{ID: "x", Found: true, State: "completed", Attempt: 1, Starts: 2}, nil, CheckDuplicated},
		{"notified twice", Seen{ID: "x", Found: true, State: "completed", Attempt: 1, Starts: 1, Notify: true, Notices: 2}, nil, CheckDuplicated},
		{"no notice", Seen{ID: "x", Found: true, State: "failed", Attempt: 1, Starts: 1, Notify: true}, nil, CheckNotice},
		{"Go error", ok, &ModelCall{What: "tool list", GoErr: "boom", Bound: time.Second}, CheckGoError},
		{"too late", ok, &ModelCall{What: "tool list", Answered: true, Answer: `{"error":{"code":"unavailable"}}`, Took: 2 * time.Second, Bound: time.Second}, CheckUnanswered},
		{"no answer", ok, &ModelCall{What: "tool list", Bound: time.Second}, CheckUnanswered},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := &Tally{Runner: "r", Fault: "f", Works: []Seen{ok, c.seen}}
			if c.call != nil {
				tl.Calls = append(tl.Calls, *c.call)
			}
			for _, check := range []string{CheckLost, CheckDuplicated, CheckUnanswered, CheckGoError, CheckNotice} {
				if got := tl.Fails(check); got != (check == c.check) {
					t.Errorf("check %q fails: %v (failures %v)", check, got, tl.Failures())
				}
			}
		})
	}
	retried := &Tally{Works: []Seen{{ID: "x", Found: true, State: "completed", Attempt: 2, Starts: 2, Retryable: true}},
		Calls: []ModelCall{{Answered: true, Answer: `{"error":{"code":"unavailable"}}`, Took: time.Second, Bound: 2 * time.Second}}}
	if f := retried.Failures(); len(f) != 0 {
		t.Fatalf("a retryable child run twice, counted, and an answer in time: %v", f)
	}
	var b strings.Builder
	WriteTable(&b, []*Tally{retried})
	if !strings.HasPrefix(b.String(), TableHeader+"\n") || !strings.Contains(b.String(), "unavailable:1") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// TestCheckTelemetry: a Work's span exported twice or never, and a
// canary in a span or a log line (not in a coordinator's stdout), are
// found.
func TestCheckTelemetry(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("w1.spans", "invoke_agent slow agentwork.work.id=a status=Unset \ninvoke_agent slow agentwork.work.id=b status=Unset \n")
	write("w2.spans", "invoke_agent slow agentwork.work.id=b status=Unset \n")
	write("co.log", "stdout: {\"result\":\"CANARY\"}\nmsg=command\n")
	if got := CheckTelemetry(dir, []string{"a"}, []string{"CANARY"}); len(got) != 0 {
		t.Fatalf("clean: %v", got)
	}
	got := CheckTelemetry(dir, []string{"a", "b", "c"}, []string{"CANARY"})
	if len(got) != 2 || !strings.Contains(got[0], "Work b: 2") || !strings.Contains(got[1], "Work c: 0") {
		t.Fatalf("spans: %v", got)
	}
	write("w3.log", "msg=leak CANARY\n")
	if got := CheckTelemetry(dir, nil, []string{"CANARY"}); len(got) != 1 || !strings.Contains(got[0], "w3.log") {
		t.Fatalf("canary: %v", got)
	}
}
