package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// TestDataConverterPending: under an encryption codec, an Engine given
// the client's converter (WithDataConverter) reads a Work's pending
// approval, for its owner and for the approver role; an Engine on a
// client without the codec, on the same task queue, cannot decode the
// request and says so (work.ErrUnavailable), as it does for Status.
func TestDataConverterPending(t *testing.T) {
	c, dc := sharedCodec(t)
	eventQueues++
	queue := fmt.Sprintf("codec-pending-%d", eventQueues)
	base := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithRPCTimeout(time.Minute)}
	echo := func(context.Context, string) (string, error) { return "", nil }
	w, err := temporal.NewWorker(c, map[string]temporal.Child{"echo": {Kind: work.KindFunction, Run: echo}},
		append(base, temporal.WithDataConverter(dc))...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	eng := temporal.New(c, append(base, temporal.WithDataConverter(dc))...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	blind := temporal.New(server(t), base...) // a client without the codec
	t.Cleanup(func() { _ = blind.Close(context.Background()) })

	o := work.NewOwner(fmt.Sprintf("codec-pending-%d", time.Now().UnixNano()))
	ref, err := eng.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
		Input: "x", NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	for _, asker := range []work.Owner{o, work.Approver()} {
		eventually(t, "the pending request under the codec", func() bool {
			reqs, err := eng.Pending(t.Context(), asker)
			if err != nil {
				t.Fatal(err)
			}
			return len(reqs) == 1 && reqs[0].Work.ID == ref.ID && reqs[0].Input == "x"
		})
		if reqs, err := blind.Pending(t.Context(), asker); !errors.Is(err, work.ErrUnavailable) {
			t.Fatalf("Pending(%s) without the converter: %+v, %v; want ErrUnavailable", asker.ID(), reqs, err)
		}
	}
	if err := eng.Deny(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, eng, o, ref.ID); st.State != work.StateCancelled {
		t.Fatalf("settled %+v", st)
	}
}
