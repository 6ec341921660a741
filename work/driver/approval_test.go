package driver_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/driver"
)

// TestApprovalWireNames pins the JSON of the approval wire types:
// Temporal histories and Restate's stored state hold them as the runners
// wrote them, and each decodes what the other runner wrote.
func TestApprovalWireNames(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{driver.ApprovalInput{Timeout: 90 * time.Second}, `{"Timeout":90000000000}`},
		{driver.AnswerRequest{Owner: "o"}, `{"Owner":"o"}`},
		{driver.AnswerRequest{Approver: true}, `{"Owner":"","Approver":true}`},
		{driver.AnswerRequest{Owner: "o", Approve: true}, `{"Owner":"o","Approve":true}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Fatalf("%T: %s %v, want %s", tc.v, b, err, tc.want)
		}
	}
	var r driver.AnswerRequest
	if err := json.Unmarshal([]byte(`{"Owner":"o","Approver":true,"Approve":true}`), &r); err != nil ||
		r != (driver.AnswerRequest{Owner: "o", Approver: true, Approve: true}) {
		t.Fatalf("decoded %+v %v", r, err)
	}
}
