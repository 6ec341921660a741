package restate

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// fuzzReplyLimit is the reply cap the fuzz target reads under: small, so
// that inputs over it are generated (the runner's is maxReplyBytes).
const fuzzReplyLimit = 4 << 10

// wireRecords are the runner's wire types as its services encode them,
// populated as a run fills them: the seeds of FuzzReply and the types it
// decodes into.
func wireRecords() []any {
	t0 := time.Unix(1700000000, 0).UTC()
	in := workInput{ID: "w_1", Owner: "o", Depth: 1, Label: "research", TargetID: "t", Kind: work.KindAgent, Input: "brief",
		MaxDuration: time.Minute, MaxResultBytes: 1 << 20, MaxAttempts: 2, Created: t0, Budget: work.Budget{MaxTurns: 3},
		Mailbox: driver.MailboxLimits{Messages: 8, Bytes: 4096}, Trace: map[string]string{"traceparent": "00-x"},
		Job:     &jobInput{Backoff: work.Backoff{Initial: time.Second, Max: time.Minute}, MaxPollErrors: 3},
		Updates: &work.UpdatePolicy{MaxUpdates: 4}}
	var reg ownerState
	reg.Admit(driver.Admission{Record: driver.Record{ID: "w_1", Label: "research", Kind: work.KindAgent, Created: t0},
		MaxOutstanding: 8, Retain: 2, Want: [3]int64{1, 0, 0}, Eff: [3]int64{1, 0, 0}, Launch: "k", Digest: "d"})
	return []any{
		&in,
		&admitReply{ID: "w_1", TargetID: "t", Seq: 3},
		&admitReply{Error: "limit", Message: "too many", Limit: "max_outstanding"},
		&claimReply{Run: true, Attempt: 1, Started: t0},
		&claimReply{Busy: true, Attempt: 2},
		&runOutcome{Output: "out", Bytes: 3, Usage: &observe.Usage{Turns: 2}, Progress: observe.Progress{Done: 1, Total: 2}, Attempt: 1},
		&runOutcome{Class: work.ClassWorkerLost, Attempt: 2},
		&controlView{State: work.StateRunning, Progress: observe.Progress{Done: 1}, Attempt: 1},
		&driver.CancelReply{Accepted: true, State: work.StateCancelRequested, At: t0},
		&sendRequest{Owner: "o", Command: "c", Digest: "d", Text: "more"},
		&sendReply{Cursor: 2, At: t0},
		&takeReply{Messages: []string{"a", "b"}, Cancel: true},
		&reg,
	}
}

// FuzzReply reads a reply as the runner reads every ingress and admin
// reply (decodeReply) into each of its wire types: never a panic; a body
// over the cap is refused before it is decoded (the value stays zero); a
// status other than 2xx is an errStatus with that status, whatever the
// body; a 2xx body that decodes encodes to JSON that decodes to the same
// value (a round trip).
func FuzzReply(f *testing.F) {
	for _, r := range wireRecords() {
		b, err := json.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(200, b)
	}
	f.Add(500, []byte(`{"code":"internal","message":"echoes CANARY"}`))
	f.Add(404, []byte(`not json`))
	f.Add(200, []byte(`{"Records":[{"ID":"x"},{"ID":"x"}],"Seq":-1}`))
	f.Add(200, bytes.Repeat([]byte("7"), fuzzReplyLimit+1))
	f.Add(200, []byte(`null`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		for _, r := range wireRecords() {
			typ := reflect.TypeOf(r).Elem()
			out := reflect.New(typ)
			err := decodeReply(status, bytes.NewReader(body), fuzzReplyLimit, out.Interface())
			if len(body) > fuzzReplyLimit {
				if !errors.Is(err, errReplyTooLarge) || !out.Elem().IsZero() {
					t.Fatalf("%s: a %d-byte reply over the %d-byte cap: %v, decoded %v", typ, len(body), fuzzReplyLimit, err, !out.Elem().IsZero())
				}
				continue
			}
			if status/100 != 2 {
				var st *errStatus
				if !errors.As(err, &st) || st.Status != status || strings.Contains(err.Error(), "CANARY") {
					t.Fatalf("%s: status %d: %v, want an errStatus of that status without the body", typ, status, err)
				}
				continue
			}
			if err != nil {
				continue // refused: not JSON of the type
			}
			enc, err := json.Marshal(out.Interface())
			if err != nil {
				t.Fatalf("%s: a decoded reply does not encode: %v", typ, err)
			}
			again := reflect.New(typ)
			if err := json.Unmarshal(enc, again.Interface()); err != nil {
				t.Fatalf("%s: a reply's encoding does not decode: %v\n%s", typ, err, enc)
			}
			if enc2, _ := json.Marshal(again.Interface()); !bytes.Equal(enc, enc2) {
				t.Fatalf("%s: a round trip changed the value:\n%s\n%s", typ, enc, enc2)
			}
		}
	})
}

// FuzzSealed opens stored content as the Engine and Worker open it
// (openString, openBytes) under a key ring: never a panic; content that
// is not an envelope comes back as it is; an envelope the ring did not
// seal for this Work and field is refused with ErrUndecryptable; what the
// ring seals opens to the same bytes, and not for another Work or field.
func FuzzSealed(f *testing.F) {
	ring := newKeyRing(bytes.Repeat([]byte{7}, contentKeySize), [][]byte{bytes.Repeat([]byte{9}, contentKeySize)})
	s, err := ring.sealString("w_1", fieldOutput, "the output")
	if err != nil {
		f.Fatal(err)
	}
	b, err := ring.sealBytes("w_1", fieldHandle, []byte("a handle"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(s))
	f.Add(b)
	f.Add([]byte(sealedPrefix + "AAAA"))
	f.Add(append(bytes.Clone(sealedMagic), make([]byte, sealOverhead)...))
	f.Add([]byte("plain output"))
	f.Fuzz(func(t *testing.T, stored []byte) {
		got, err := ring.openString("w_1", fieldOutput, string(stored))
		if _, sealed := sealedStringBody(string(stored)); !sealed && (err != nil || got != string(stored)) {
			t.Fatalf("content that is not an envelope: %q, %v; want it as it is", got, err)
		}
		if err != nil && !errors.Is(err, ErrUndecryptable) {
			t.Fatalf("a string envelope refused with %v, want ErrUndecryptable", err)
		}
		gotB, err := ring.openBytes("w_1", fieldHandle, stored)
		if _, sealed := sealedBody(stored); !sealed && (err != nil || !bytes.Equal(gotB, stored)) {
			t.Fatalf("bytes that are not an envelope: %q, %v; want them as they are", gotB, err)
		}
		if err != nil && !errors.Is(err, ErrUndecryptable) {
			t.Fatalf("a bytes envelope refused with %v, want ErrUndecryptable", err)
		}
		if plainLen(string(stored)) < 0 || plainLenBytes(stored) < 0 {
			t.Fatal("a negative plaintext size")
		}
		sealed, err := ring.sealString("w_2", fieldGuidance, string(stored))
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ring.openString("w_2", fieldGuidance, sealed); err != nil || back != string(stored) {
			t.Fatalf("sealed and opened: %q, %v; want the same bytes", back, err)
		}
		if _, err := ring.openString("w_3", fieldGuidance, sealed); !errors.Is(err, ErrUndecryptable) {
			t.Fatalf("opened for another Work: %v, want ErrUndecryptable", err)
		}
		if plainLen(sealed) != len(stored) {
			t.Fatalf("plainLen of a sealed %d-byte value: %d", len(stored), plainLen(sealed))
		}
	})
}
