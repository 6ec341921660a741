package work_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

func TestSmoke(t *testing.T) {
	rec := &work.Recorder{}
	s := work.New(work.WithObserver(rec))
	defer s.Close(context.Background())
	o := work.NewOwner("coord")
	release := make(chan struct{})
	ref, err := s.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "research", Kind: work.KindAgent},
		Run: func(ctx context.Context) (string, error) {
			<-release
			ex, _ := work.ExecutionFrom(ctx)
			return "out:" + ex.Guidance()[0], nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(o, ref.ID, "c1", "hello"); err != nil {
		t.Fatal(err)
	}
	close(release)
	st, out, err := s.Result(context.Background(), o, ref.ID, 5*time.Second)
	if err != nil || out != "out:hello" || st.State != work.StateCompleted {
		t.Fatalf("%v %q %v", st, out, err)
	}
	b, _ := json.Marshal(st)
	t.Log(string(b))
	for _, e := range rec.Events() {
		t.Log(e.Type, e.From, e.To)
	}
}
