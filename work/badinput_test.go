package work_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
)

func TestBadInputs(t *testing.T) {
	run := immediate("x")
	tests := []struct {
		name string
		call func(h *harness, id string) error
		code string
		is   error
	}{
		{"start/empty owner", func(h *harness, _ string) error {
			_, err := h.s.Start(context.Background(), work.Spec{Target: agent, Run: run})
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"start/nil run", func(h *harness, _ string) error {
			_, err := h.s.Start(context.Background(), work.Spec{Owner: coord, Target: agent})
			return err
		}, "invalid_spec", work.ErrInvalidSpec},
		{"start/empty label", func(h *harness, _ string) error {
			_, err := h.s.Start(context.Background(), work.Spec{Owner: coord, Target: work.Target{Kind: work.KindAgent}, Run: run})
			return err
		}, "invalid_spec", work.ErrInvalidSpec},
		{"start/zero kind", func(h *harness, _ string) error {
			_, err := h.s.Start(context.Background(), work.Spec{Owner: coord, Target: work.Target{Label: "x"}, Run: run})
			return err
		}, "invalid_spec", work.ErrInvalidSpec},
		{"start/unknown kind", func(h *harness, _ string) error {
			_, err := h.s.Start(context.Background(), work.Spec{Owner: coord, Target: work.Target{Label: "x", Kind: 7}, Run: run})
			return err
		}, "invalid_spec", work.ErrInvalidSpec},
		{"call/empty owner", func(h *harness, _ string) error {
			_, err := h.s.Call(context.Background(), work.Spec{Target: agent, Run: run})
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"call/nil run", func(h *harness, _ string) error {
			_, err := h.s.Call(context.Background(), work.Spec{Owner: coord, Target: agent})
			return err
		}, "invalid_spec", work.ErrInvalidSpec},
		{"call/unknown kind", func(h *harness, _ string) error {
			_, err := h.s.Call(context.Background(), work.Spec{Owner: coord, Target: work.Target{Label: "x", Kind: 3}, Run: run})
			return err
		}, "invalid_spec", work.ErrInvalidSpec},
		{"send/empty guidance", func(h *harness, id string) error {
			_, err := h.s.Send(t.Context(), coord, id, "c1", "")
			return err
		}, "empty_message", work.ErrEmptyMessage},
		{"send/blank guidance", func(h *harness, id string) error {
			_, err := h.s.Send(t.Context(), coord, id, "c1", " \n ")
			return err
		}, "empty_message", work.ErrEmptyMessage},
		{"send/empty owner", func(h *harness, id string) error {
			_, err := h.s.Send(t.Context(), work.Owner{}, id, "c1", "hi")
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"result/negative timeout", func(h *harness, id string) error {
			_, _, err := h.s.Result(context.Background(), coord, id, -1)
			return err
		}, "invalid_timeout", work.ErrInvalidTimeout},
		{"result/empty owner", func(h *harness, id string) error {
			_, _, err := h.s.Result(context.Background(), work.Owner{}, id, 0)
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"status/empty owner", func(h *harness, id string) error {
			_, err := h.s.Status(t.Context(), work.Owner{}, id)
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"cancel/empty owner", func(h *harness, id string) error {
			_, err := h.s.Cancel(t.Context(), work.Owner{}, id)
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"detach/empty owner", func(h *harness, id string) error {
			_, err := h.s.Detach(t.Context(), work.Owner{}, id)
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
		{"list/empty owner", func(h *harness, _ string) error {
			_, err := h.s.List(t.Context(), work.NewOwner(""))
			return err
		}, "invalid_owner", work.ErrInvalidOwner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ref, _ := h.running(coord, agent) // one registered Work to aim at
			beforeCensus, beforeEvents := census(h.s), len(h.obs.rec.Events())
			beforeList, _ := h.s.List(t.Context(), coord)
			err := tt.call(h, ref.ID)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			wantCode(t, err, tt.code)
			var we *work.Error
			errors.As(err, &we)
			if we.Error() == "" || we.Class != "" {
				t.Fatalf("error = %#v", we)
			}
			afterList, _ := h.s.List(t.Context(), coord)
			if c := census(h.s); len(c) != len(beforeCensus) || c[work.StateRunning] != 1 ||
				len(h.obs.rec.Events()) != beforeEvents || len(afterList) != len(beforeList) {
				t.Fatalf("bad input changed the registry: %v, %d events", c, len(h.obs.rec.Events())-beforeEvents)
			}
		})
	}
}

func TestErrorIsMatchesByCode(t *testing.T) {
	codes := map[string]bool{}
	for _, e := range []*work.Error{work.ErrNotFound, work.ErrInvalidOwner, work.ErrInvalidSpec, work.ErrInvalidTimeout,
		work.ErrEmptyMessage, work.ErrNotAgent, work.ErrTerminal, work.ErrConflict,
		work.ErrLimit, work.ErrClosed, work.ErrChildFailed, work.ErrCancelled} {
		if e.Code == "" || codes[e.Code] {
			t.Fatalf("code %q empty or repeated", e.Code)
		}
		codes[e.Code] = true
		if errors.Is(e, work.ErrNotFound) != (e == work.ErrNotFound) {
			t.Fatalf("%s matches not_found", e.Code)
		}
	}
	if errors.Is(errors.New("not_found"), work.ErrNotFound) {
		t.Fatal("a plain error matched")
	}
}
