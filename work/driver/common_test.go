package driver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// The shared transport options give each value one meaning: positive is
// the value, 0 the runner's default, negative invalid (the first invalid
// option's error kept, naming it, before work's options' own).
func TestCommonValues(t *testing.T) {
	c := NewCommon(3, 10*time.Second, time.Second)
	c.SetMaxAttempts(5)
	c.SetRPCTimeout(time.Minute)
	c.SetPollInterval(2 * time.Second)
	if c.MaxAttempts != 5 || c.RPCTimeout != time.Minute || c.PollInterval != 2*time.Second || c.Err != nil {
		t.Fatalf("positive values: %+v", c)
	}
	c.SetMaxAttempts(0)
	c.SetRPCTimeout(0)
	c.SetPollInterval(0)
	if c.MaxAttempts != 3 || c.RPCTimeout != 10*time.Second || c.PollInterval != time.Second || c.Err != nil {
		t.Fatalf("0 must be the default: %+v", c)
	}
	c.SetRPCTimeout(-time.Second)
	c.SetPollInterval(-1)
	if !errors.Is(c.Err, work.ErrInvalidLimit) || !strings.Contains(c.Err.Error(), "WithRPCTimeout(-1s)") {
		t.Fatalf("Err = %v, want the first invalid option's ErrInvalidLimit", c.Err)
	}
	if c.RPCTimeout != 10*time.Second || c.PollInterval != time.Second {
		t.Fatalf("an invalid value changed the setting: %+v", c)
	}
	c.AddWork(work.WithMaxRunning(-1))
	c.Resolve()
	if !strings.Contains(c.Err.Error(), "WithRPCTimeout") {
		t.Fatalf("Resolve replaced the first error: %v", c.Err)
	}

	d := NewCommon(2, time.Second, time.Second)
	d.AddWork(work.WithMaxRunning(-1))
	d.Resolve()
	if !errors.Is(d.Err, work.ErrInvalidLimit) || !strings.Contains(d.Err.Error(), "WithMaxRunning") {
		t.Fatalf("Resolve's Err = %v, want work's option error", d.Err)
	}
}

func TestCommonAttempts(t *testing.T) {
	c := NewCommon(4, time.Second, time.Second)
	c.SetRetryable([]string{"a", "b"})
	if got := c.Attempts("a"); got != 4 {
		t.Errorf("Attempts(retryable) = %d, want 4", got)
	}
	if got := c.Attempts("c"); got != 1 {
		t.Errorf("Attempts(other) = %d, want 1", got)
	}
	var z Common // a zero Common: no panic
	z.SetRetryable([]string{"x"})
	if z.Attempts("x") != 0 || z.Attempts("y") != 1 {
		t.Errorf("zero Common: %+v", z)
	}
}
