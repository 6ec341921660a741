package driver_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

func TestUpdateMetas(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	us := []work.Update{
		{Seq: 3, Key: "a", Value: []byte(`"three"`), Time: t0},
		{Seq: 4, Key: "b", Value: []byte(`{"x":1}`), Question: true, Time: t0.Add(time.Second)},
	}
	ms := driver.UpdateMetas(us)
	want := []driver.UpdateMeta{{Seq: 3, Bytes: 7, Time: t0}, {Seq: 4, Bytes: 7, Time: t0.Add(time.Second)}}
	if len(ms) != len(want) || ms[0] != want[0] || ms[1] != want[1] {
		t.Fatalf("UpdateMetas = %+v, want %+v", ms, want)
	}
	if ms := driver.UpdateMetas(nil); ms == nil || len(ms) != 0 {
		t.Fatalf("UpdateMetas(nil) = %#v, want an empty slice", ms)
	}
}

// TestUpdateWireNames pins the JSON of the update and cancel wire types:
// Temporal histories and Restate journals hold them as the runners wrote
// them.
func TestUpdateWireNames(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		v    any
		want string
	}{
		{driver.UpdateReport{Key: "k", Value: []byte(`1`), Question: true}, `{"Key":"k","Value":"MQ==","Question":true}`},
		{driver.UpdateReport{Key: "k", Value: []byte(`1`)}, `{"Key":"k","Value":"MQ=="}`},
		{driver.UpdateReportReply{Seq: 2, Duplicate: true, Reason: "count"}, `{"Seq":2,"Duplicate":true,"Reason":"count"}`},
		{driver.UpdateReportReply{}, `{"Seq":0}`},
		{driver.UpdatesQuery{Owner: "o", After: 3}, `{"Owner":"o","After":3}`},
		{driver.UpdatesReply{Found: true}, `{"Found":true,"Updates":null}`},
		{driver.CancelReply{Accepted: true, State: work.StateCancelRequested, At: t0}, `{"Accepted":true,"State":"cancel-requested","At":"2026-01-02T03:04:05Z"}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T: %s %v, want %s", tc.v, b, err, tc.want)
		}
	}
}
