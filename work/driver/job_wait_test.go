package driver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestSubmit: Submit's classes, as the in-process engine gives them.
func TestSubmit(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name        string
		parent      context.Context
		maxDuration time.Duration
		submit      func(ctx context.Context) ([]byte, error)
		handle      string
		class       string
	}{
		{"handle", context.Background(), 0, func(context.Context) ([]byte, error) { return []byte("h"), nil }, "h", ""},
		{"panic", context.Background(), 0, func(context.Context) ([]byte, error) { panic("submit") }, "", work.ClassPanic},
		{"error", context.Background(), 0, func(context.Context) ([]byte, error) { return []byte("h"), errors.New("no") }, "", work.ClassError},
		{"deadline", context.Background(), time.Millisecond, func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, "", work.ClassDeadline},
		{"cancelled", cancelled, 0, func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, "", work.ClassCancelled},
		{"cancelled-other-error", cancelled, 0, func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return nil, errors.New("gone")
		}, "", work.ClassError},
		{"cancelled-handle-kept", cancelled, 0, func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			return []byte("late"), nil
		}, "late", ""},
		{"canceled-not-asked", context.Background(), 0, func(context.Context) ([]byte, error) { return nil, context.Canceled }, "", work.ClassError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gotKey, gotInput string
			j := &work.Job{Submit: func(ctx context.Context, key, input string) ([]byte, error) {
				gotKey, gotInput = key, input
				return tc.submit(ctx)
			}}
			h, class := Submit(context.Background(), tc.parent, j, "w1", "in", tc.maxDuration)
			if string(h) != tc.handle || class != tc.class {
				t.Fatalf("Submit = %q, %q; want %q, %q", h, class, tc.handle, tc.class)
			}
			if gotKey != "w1" || gotInput != "in" {
				t.Fatalf("Submit called with key %q, input %q", gotKey, gotInput)
			}
		})
	}
}

// TestAwait: Await's outcomes, as the in-process engine reads a poll.
func TestAwait(t *testing.T) {
	cases := []struct {
		name    string
		await   func() (work.Poll, error)
		outcome string
		poll    work.Poll
	}{
		{"waiting", func() (work.Poll, error) { return work.Poll{Progress: true, Output: "x"}, nil },
			observe.PollOutcomeWaiting, work.Poll{State: work.PollWaiting, Progress: true}},
		{"unknown-state", func() (work.Poll, error) { return work.Poll{State: 9, Progress: true}, nil },
			observe.PollOutcomeWaiting, work.Poll{State: work.PollWaiting, Progress: true}},
		{"done", func() (work.Poll, error) { return work.Poll{State: work.PollDone, Output: "out", Class: "x"}, nil },
			observe.PollOutcomeDone, work.Poll{State: work.PollDone, Output: "out"}},
		{"failed", func() (work.Poll, error) { return work.Poll{State: work.PollFailed, Class: "quota", Output: "x"}, nil },
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: "quota"}},
		{"failed-no-class", func() (work.Poll, error) { return work.Poll{State: work.PollFailed}, nil },
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassError}},
		{"failed-class-name", func() (work.Poll, error) { return work.Poll{State: work.PollFailed, Class: "quota_2"}, nil },
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: "quota_2"}},
		{"failed-class-32", func() (work.Poll, error) {
			return work.Poll{State: work.PollFailed, Class: strings.Repeat("q", 32)}, nil
		},
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: strings.Repeat("q", 32)}},
		{"failed-class-33", func() (work.Poll, error) {
			return work.Poll{State: work.PollFailed, Class: strings.Repeat("q", 33)}, nil
		},
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassError}},
		{"failed-class-text", func() (work.Poll, error) {
			return work.Poll{State: work.PollFailed, Class: "quota exceeded for acct 42"}, nil
		}, observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassError}},
		{"failed-class-upper", func() (work.Poll, error) { return work.Poll{State: work.PollFailed, Class: "Quota"}, nil },
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassError}},
		{"failed-class-digit-first", func() (work.Poll, error) { return work.Poll{State: work.PollFailed, Class: "4xx"}, nil },
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassError}},
		{"error", func() (work.Poll, error) { return work.Poll{State: work.PollDone, Output: "x"}, errors.New("down") },
			observe.PollOutcomeError, work.Poll{}},
		{"panic", func() (work.Poll, error) { panic("await") },
			observe.PollOutcomeFailed, work.Poll{State: work.PollFailed, Class: work.ClassPanic}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gotHandle string
			j := &work.Job{Await: func(_ context.Context, h []byte) (work.Poll, error) {
				gotHandle = string(h)
				return tc.await()
			}}
			o, p := Await(context.Background(), j, []byte("h"))
			if o != tc.outcome || p != tc.poll {
				t.Fatalf("Await = %q, %+v; want %q, %+v", o, p, tc.outcome, tc.poll)
			}
			if gotHandle != "h" {
				t.Fatalf("Await called with handle %q", gotHandle)
			}
		})
	}
}

// TestJobWaitPolled: a sequence of polls and the end Polled decides, with
// the delays Next gives before each poll and the state it keeps.
func TestJobWaitPolled(t *testing.T) {
	b := work.Backoff{Initial: time.Second, Max: 4 * time.Second}
	waiting := JobPoll{Outcome: observe.PollOutcomeWaiting}
	progress := JobPoll{Outcome: observe.PollOutcomeWaiting, Progress: true}
	failedPoll := JobPoll{Outcome: observe.PollOutcomeError}
	done := JobPoll{Outcome: observe.PollOutcomeDone, Bytes: 5}
	type step struct {
		p          JobPoll
		past, stop bool
	}
	cases := []struct {
		name     string
		maxBytes int
		maxErrs  int
		steps    []step
		delays   []time.Duration // Next before each poll
		end      JobEnd
		ended    bool
	}{
		{"completes", 0, 0, []step{{p: waiting}, {p: waiting}, {p: done}},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, JobEnd{Bytes: 5}, true},
		{"progress-resets-backoff", 0, 0, []step{{p: waiting}, {p: progress}, {p: waiting}},
			[]time.Duration{time.Second, 2 * time.Second, time.Second}, JobEnd{}, false},
		{"capped", 0, 0, []step{{p: waiting}, {p: waiting}, {p: waiting}, {p: waiting}},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}, JobEnd{}, false},
		{"result-too-large", 4, 0, []step{{p: done}}, []time.Duration{time.Second},
			JobEnd{Class: work.ClassResultTooLarge, Bytes: 5}, true},
		{"result-at-bound", 5, 0, []step{{p: done}}, []time.Duration{time.Second}, JobEnd{Bytes: 5}, true},
		{"failed", 0, 0, []step{{p: JobPoll{Outcome: observe.PollOutcomeFailed, Class: "quota"}}}, []time.Duration{time.Second},
			JobEnd{Class: "quota"}, true},
		{"failed-no-class", 0, 0, []step{{p: JobPoll{Outcome: observe.PollOutcomeFailed}}}, []time.Duration{time.Second},
			JobEnd{Class: work.ClassError}, true},
		{"done-wins-cancel", 0, 0, []step{{p: done, stop: true}}, []time.Duration{time.Second},
			JobEnd{Bytes: 5}, true},
		{"deadline-over-done", 0, 0, []step{{p: done, past: true, stop: true}}, []time.Duration{time.Second},
			JobEnd{Class: work.ClassDeadline}, true},
		{"deadline-over-failed", 0, 0, []step{{p: JobPoll{Outcome: observe.PollOutcomeFailed, Class: "quota"}, past: true}},
			[]time.Duration{time.Second}, JobEnd{Class: work.ClassDeadline}, true},
		{"deadline-over-cancel", 0, 0, []step{{p: waiting, past: true, stop: true}}, []time.Duration{time.Second},
			JobEnd{Class: work.ClassDeadline, Cancel: true}, true},
		{"deadline-over-errors", 0, 1, []step{{p: failedPoll, past: true}}, []time.Duration{time.Second},
			JobEnd{Class: work.ClassDeadline, Cancel: true}, true},
		{"cancel", 0, 0, []step{{p: waiting}, {p: waiting, stop: true}}, []time.Duration{time.Second, 2 * time.Second},
			JobEnd{Class: work.ClassCancelled, Cancel: true}, true},
		{"errors-default", 0, 0, []step{{p: failedPoll}, {p: failedPoll}, {p: failedPoll}},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, JobEnd{Class: work.ClassError}, true},
		{"errors-bound", 0, 2, []step{{p: failedPoll}, {p: failedPoll}}, []time.Duration{time.Second, 2 * time.Second},
			JobEnd{Class: work.ClassError}, true},
		{"errors-reset", 0, 2, []step{{p: failedPoll}, {p: waiting}, {p: failedPoll}, {p: progress}},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}, JobEnd{}, false},
		{"error-clears-progress", 0, 0, []step{{p: progress}, {p: failedPoll}, {p: waiting}},
			[]time.Duration{time.Second, time.Second, 2 * time.Second}, JobEnd{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s JobWait
			var end JobEnd
			var ended bool
			for i, st := range tc.steps {
				if ended {
					t.Fatalf("ended at poll %d of %d: %+v", i, len(tc.steps), end)
				}
				if d := s.Next(b); d != tc.delays[i] || s.Delay != d {
					t.Fatalf("delay before poll %d = %v (kept %v), want %v", i+1, d, s.Delay, tc.delays[i])
				}
				end, ended = s.Polled(st.p, tc.maxBytes, tc.maxErrs, st.past, st.stop)
			}
			if end != tc.end || ended != tc.ended {
				t.Fatalf("end = %+v, %v; want %+v, %v", end, ended, tc.end, tc.ended)
			}
		})
	}
}

// TestPastDeadline: the deadline itself is past; the zero deadline never is.
func TestPastDeadline(t *testing.T) {
	d := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		now, deadline time.Time
		want          bool
	}{
		{d.Add(-time.Nanosecond), d, false},
		{d, d, true},
		{d.Add(time.Second), d, true},
		{d, time.Time{}, false},
	} {
		if got := PastDeadline(tc.now, tc.deadline); got != tc.want {
			t.Errorf("PastDeadline(%v, %v) = %v, want %v", tc.now, tc.deadline, got, tc.want)
		}
	}
}

// TestCancelJob: Cancel is called with the handle; a panic in it is
// recovered and its error dropped; a job without one is left alone.
func TestCancelJob(t *testing.T) {
	var got []string
	for _, cancel := range []func(context.Context, []byte) error{
		func(_ context.Context, h []byte) error { got = append(got, string(h)); return nil },
		func(_ context.Context, h []byte) error { got = append(got, string(h)); return errors.New("gone") },
		func(_ context.Context, h []byte) error { got = append(got, string(h)); panic("cancel") },
		nil,
	} {
		CancelJob(context.Background(), &work.Job{Cancel: cancel}, []byte("h"))
	}
	if len(got) != 3 || got[0] != "h" || got[1] != "h" || got[2] != "h" {
		t.Fatalf("Cancel calls %q, want three with the handle", got)
	}
}
