package work_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestResultLimitForegroundAndBackground: the result-byte limit
// (WithMaxResultBytes, lowered by Spec.MaxResultBytes; 1 MiB by default, 0
// none) applies to foreground calls as to background Work. Over it, a
// foreground Call fails with ErrChildFailed class result_too_large (the
// class the background Work fails with) and returns no output: the output
// is never truncated.
func TestResultLimitForegroundAndBackground(t *testing.T) {
	o := work.NewOwner("coord")
	for _, tt := range []struct {
		name     string
		opts     []work.Option
		specMax  int
		size     int
		tooLarge bool
	}{
		{name: "default limit, over", size: work.DefaultMaxResultBytes + 1, tooLarge: true},
		{name: "default limit, at", size: work.DefaultMaxResultBytes},
		{name: "option, over", opts: []work.Option{work.WithMaxResultBytes(10)}, size: 11, tooLarge: true},
		{name: "option, at", opts: []work.Option{work.WithMaxResultBytes(10)}, size: 10},
		{name: "spec lowers", opts: []work.Option{work.WithMaxResultBytes(10)}, specMax: 5, size: 6, tooLarge: true},
		{name: "spec cannot raise", opts: []work.Option{work.WithMaxResultBytes(10)}, specMax: 100, size: 11, tooLarge: true},
		{name: "no limit", opts: []work.Option{work.WithMaxResultBytes(0)}, size: 2 * work.DefaultMaxResultBytes},
		{name: "empty output", size: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts...)
			want := strings.Repeat("x", tt.size)
			spec := work.Spec{Owner: o, Target: agent, Run: immediate(want), MaxResultBytes: tt.specMax}

			out, err := h.s.Call(t.Context(), spec)
			ref, serr := h.s.Start(t.Context(), spec)
			if serr != nil {
				t.Fatalf("Start: %v", serr)
			}
			bg := h.obs.waitTerminal(ref.ID)
			if !tt.tooLarge {
				if err != nil || out != want {
					t.Fatalf("Call = %d bytes, %v; want the exact %d bytes", len(out), err, tt.size)
				}
				if bg.Type != observe.EventCompleted {
					t.Fatalf("background Work %s", bg.Type)
				}
				return
			}
			if out != "" {
				t.Fatalf("Call returned %d bytes with its error: the output must not be truncated or kept", len(out))
			}
			if !errors.Is(err, work.ErrChildFailed) {
				t.Fatalf("Call = %v, want ErrChildFailed", err)
			}
			var we *work.Error
			if !errors.As(err, &we) || we.Class != work.ClassResultTooLarge {
				t.Fatalf("Call error %v, want class %s", err, work.ClassResultTooLarge)
			}
			if bg.Type != observe.EventFailed || bg.ErrorClass != we.Class {
				t.Fatalf("background Work %s class %q; the foreground call's class is %q", bg.Type, bg.ErrorClass, we.Class)
			}
		})
	}
}
