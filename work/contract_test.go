package work_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
)

func TestSpecValidate(t *testing.T) {
	run := func(context.Context) (string, error) { return "", nil }
	ok := work.Spec{Owner: work.NewOwner("o"), Target: work.Target{Label: "t", Kind: work.KindAgent}, Run: run}
	for _, tc := range []struct {
		name string
		mod  func(*work.Spec)
		want error
	}{
		{"valid", func(*work.Spec) {}, nil},
		{"negative budget", func(s *work.Spec) { s.Budget.MaxTurns = -1 }, work.ErrInvalidBudget},
		{"zero owner", func(s *work.Spec) { s.Owner = work.Owner{} }, work.ErrInvalidOwner},
		{"slash owner", func(s *work.Spec) { s.Owner = work.NewOwner("a/b") }, work.ErrInvalidOwner},
		{"empty label", func(s *work.Spec) { s.Target.Label = "" }, work.ErrInvalidSpec},
		{"bad kind", func(s *work.Spec) { s.Target.Kind = 99 }, work.ErrInvalidSpec},
		{"nil run", func(s *work.Spec) { s.Run = nil }, work.ErrInvalidSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mod(&s)
			if err := s.Validate(); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Validate() = %v, want %v", err, tc.want)
			}
		})
	}
}

// launchConflict is the ErrConflict of a reused launch identity, as
// work/driver finds it.
var launchConflict, _ = work.DecodeError(work.ErrConflict.Code, contract.LaunchConflict)

func TestErrorCodeAndDecode(t *testing.T) {
	for _, e := range []*work.Error{work.ErrNotFound, work.ErrInvalidOwner, work.ErrInvalidSpec, work.ErrInvalidTimeout,
		work.ErrEmptyMessage, work.ErrNotAgent, work.ErrTerminal, work.ErrMessageTooLarge,
		work.ErrMailboxFull, work.ErrConflict, work.ErrLimit, work.ErrClosed, work.ErrCloseFromChild, work.ErrScopeEnded,
		work.ErrChildFailed, work.ErrCancelled, work.ErrNotInitialized, work.ErrInvalidBudget, work.ErrBudgetExhausted,
		work.ErrUnavailable} {
		if got, ok := work.DecodeError(e.Code, e.Error()); !ok || got != e {
			t.Errorf("DecodeError(%q) = %v, %v", e.Code, got, ok)
		}
	}
	if _, ok := work.DecodeError("nope", "nope"); ok {
		t.Error("unknown code found")
	}
	for _, tc := range []struct {
		name string
		in   *work.Error
	}{
		{"base", work.ErrNotFound},
		{"detail", work.ErrLimit.Detail(contract.LimitDetail(contract.LimitOutstanding, 3))},
		{"variant", launchConflict},
		{"pool", work.ErrBudgetExhausted.Detail("the turns budget of this owner cannot cover the child's")},
		{"pool scope", work.ErrInvalidOwner.Detail("a child's scope has no pool of its own")},
	} {
		got, ok := work.DecodeError(tc.in.Code, tc.in.Error())
		if !ok || got.Error() != tc.in.Error() || !errors.Is(got, tc.in) {
			t.Errorf("%s: DecodeError = %v, %v", tc.name, got, ok)
		}
	}
	if got := work.ErrLimit.Detail(contract.LimitDetail(contract.LimitStarts, 2)).Error(); got != "limit exceeded: starts limit 2 reached for this owner" {
		t.Errorf("the starts limit's refusal = %q", got)
	}
	if launchConflict == work.ErrConflict || launchConflict.Error() != contract.LaunchConflict || !errors.Is(launchConflict, work.ErrConflict) {
		t.Errorf("the launch conflict is not an ErrConflict of its own: %v", launchConflict)
	}
	cause := errors.New("transport")
	err := error(work.ErrUnavailable.Wrap(cause))
	if !errors.Is(err, work.ErrUnavailable) || !errors.Is(err, cause) || err.Error() != "engine unavailable" {
		t.Errorf("Wrap: %v", err)
	}
}

// Budget.Validate refuses a negative field, naming it, and admits the rest.
func TestBudgetValidate(t *testing.T) {
	if err := (work.Budget{MaxTurns: 1, MaxDuration: time.Second}).Validate(); err != nil {
		t.Errorf("valid budget: %v", err)
	}
	for field, b := range map[string]work.Budget{"MaxTurns": {MaxTurns: -1}, "MaxToolCalls": {MaxToolCalls: -2},
		"MaxTokens": {MaxTokens: -1}, "MaxDuration": {MaxDuration: -time.Second}} {
		err := b.Validate()
		if !errors.Is(err, work.ErrInvalidBudget) || err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: Validate = %v", field, err)
		}
	}
}
