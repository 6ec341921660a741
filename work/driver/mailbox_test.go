package driver

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func TestMailbox(t *testing.T) {
	var m Mailbox[string]
	l := MailboxLimits{Messages: 2, Bytes: 10, Commands: 1}
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	size := func(s string) int { return len(s) }
	check := func(kind observe.Kind, answer bool, command, digest string, bytes int, terminal bool) (*Receipt, *work.Error) {
		return m.Check(kind, answer, command, digest, bytes, terminal, l)
	}
	if _, err := check(work.KindFunction, false, "", "d", 1, false); !errors.Is(err, work.ErrNotAgent) {
		t.Fatalf("a function child: %v, want ErrNotAgent", err)
	}
	if _, err := check(work.KindFunction, true, "", "d", 1, false); err != nil {
		t.Fatalf("an answer to a function child: %v", err)
	}
	r1 := m.Accept("abc", 3, "c1", "d1", at, "", l.Commands)
	if r1.Cursor != 1 || !r1.At.Equal(at) {
		t.Fatalf("first receipt %+v", r1)
	}
	// A repeated command: its first receipt, before the terminal and full
	// checks; another text: a conflict.
	if rep, err := check(work.KindAgent, false, "c1", "d1", 3, true); err != nil || rep == nil || *rep != r1 {
		t.Fatalf("repeat: %+v %v, want the first receipt", rep, err)
	}
	if _, err := check(work.KindAgent, false, "c1", "other", 3, false); !errors.Is(err, work.ErrConflict) {
		t.Fatalf("another text: %v, want ErrConflict", err)
	}
	if _, err := check(work.KindAgent, false, "c2", "d2", 3, true); !errors.Is(err, work.ErrTerminal) {
		t.Fatalf("terminal: %v, want ErrTerminal", err)
	}
	if _, err := check(work.KindAgent, false, "", "d", 8, false); !errors.Is(err, work.ErrMailboxFull) {
		t.Fatalf("over the bytes: %v, want ErrMailboxFull", err)
	}
	m.Accept("defg", 4, "c2", "d2", at, "", l.Commands)
	if _, ok := m.Commands["c1"]; ok || len(m.CmdOrder) != 1 {
		t.Fatalf("command records %v, want the newest one only", m.CmdOrder)
	}
	if _, err := check(work.KindAgent, false, "", "d", 1, false); !errors.Is(err, work.ErrMailboxFull) {
		t.Fatalf("over the count: %v, want ErrMailboxFull", err)
	}
	if got := m.Take(1, size); !slices.Equal(got, []string{"abc"}) || m.PendBytes != 4 {
		t.Fatalf("take 1: %v, %d bytes left", got, m.PendBytes)
	}
	r3 := m.Accept("h", 1, "", "d", at, "", l.Commands)
	if r3.Cursor != 3 {
		t.Fatalf("cursor %d, want 3", r3.Cursor)
	}
	if got := m.Drop(); !slices.Equal(got, []string{"defg", "h"}) || m.PendBytes != 0 || len(m.Pending) != 0 {
		t.Fatalf("drop: %v, %d bytes left", got, m.PendBytes)
	}
	if got := m.Take(-1, size); len(got) != 0 {
		t.Fatalf("take from empty: %v", got)
	}
}
