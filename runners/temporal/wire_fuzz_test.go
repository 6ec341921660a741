package temporal

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// wireTypes are the runner's wire types: what its workflows, activities,
// updates, queries and memos carry as payloads.
var wireTypes = []any{
	workInput{}, runInput{}, runOutcome{}, workOutcome{}, driver.CancelReply{}, sendRequest{},
	guidanceRef{}, admitReply{}, ownerState{}, startedReply{}, driver.UpdateReport{}, driver.UpdateReportReply{},
	driver.UpdatesQuery{}, driver.UpdatesReply{}, updateCarry{}, jobInput{}, jobState{}, driver.ApprovalInput{}, submitInput{},
	submitOutcome{}, awaitInput{}, pollOutcome{}, driver.AnswerRequest{}, approvalsState{}, guidanceInput{},
	rejoinInput{}, observe.Progress{},
}

// historyPayloads returns the data of every payload in the replay test
// data's histories (testdata/*.json, protojson): the records as the
// runner wrote them.
func historyPayloads(f *testing.F) [][]byte {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("the replay test data: %v, %d files", err, len(files))
	}
	var out [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if d, ok := x["data"].(string); ok {
				if b, err := base64.StdEncoding.DecodeString(d); err == nil {
					out = append(out, b)
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		walk(v)
	}
	return out
}

// FuzzPayload decodes a payload's data as the runner's workflows,
// activities and reads decode it (the SDK's JSON payload converter) into
// each wire type, and reads it as a heartbeat's progress and as a Work's
// memo: never a panic; a value that decodes encodes to JSON that decodes
// to the same value (a round trip); a payload over maxReadPayload is
// refused before it is decoded, and one that does not decode is
// work.ErrUnavailable, never a zero read as a value.
func FuzzPayload(f *testing.F) {
	seeds := historyPayloads(f)
	if len(seeds) < 10 {
		f.Fatalf("%d payloads in the replay test data", len(seeds))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add([]byte(`{"Done":-1,"Total":-2}`))
	f.Add([]byte(`{"Records":[{"ID":"x"},{"ID":"x"}],"Unconfirmed":{"x":"not a time"}}`))
	f.Add(bytes.Repeat([]byte(" "), maxReadPayload+1))
	dc := converter.GetDefaultDataConverter()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)}, Data: data}
		for _, w := range wireTypes {
			typ := reflect.TypeOf(w)
			out := reflect.New(typ)
			if dc.FromPayload(p, out.Interface()) != nil {
				continue
			}
			enc, err := dc.ToPayload(out.Interface())
			if err != nil {
				t.Fatalf("%s: a decoded payload does not encode: %v", typ, err)
			}
			again := reflect.New(typ)
			if err := dc.FromPayload(enc, again.Interface()); err != nil {
				t.Fatalf("%s: a payload's encoding does not decode: %v\n%s", typ, err, enc.GetData())
			}
			if enc2, _ := dc.ToPayload(again.Interface()); !bytes.Equal(enc.GetData(), enc2.GetData()) {
				t.Fatalf("%s: a round trip changed the value:\n%s\n%s", typ, enc.GetData(), enc2.GetData())
			}
		}
		over := len(data) > maxReadPayload
		prog, err := heartbeatProgress(dc, []*workflowpb.PendingActivityInfo{{HeartbeatDetails: &commonpb.Payloads{Payloads: []*commonpb.Payload{p}}}})
		if err != nil && (!errors.Is(err, work.ErrUnavailable) || prog != (observe.Progress{})) {
			t.Fatalf("a heartbeat that does not decode: %+v, %v; want a zero and work.ErrUnavailable", prog, err)
		}
		if over && !errors.Is(err, errPayloadTooLarge) {
			t.Fatalf("a %d-byte heartbeat over the cap: %v", len(data), err)
		}
		e := &engine{cfg: config{dc: dc}}
		ow, err := e.openWorkOf(&workflowpb.WorkflowExecutionInfo{Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{memoTarget: p}}})
		if err != nil && (!errors.Is(err, work.ErrUnavailable) || ow.target != "") {
			t.Fatalf("a memo that does not decode: %+v, %v; want work.ErrUnavailable", ow, err)
		}
		if over && !errors.Is(err, errPayloadTooLarge) {
			t.Fatalf("a %d-byte memo over the cap: %v", len(data), err)
		}
	})
}
