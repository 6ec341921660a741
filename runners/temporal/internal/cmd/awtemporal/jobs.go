package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/agentwork/agentwork/work"
)

// jobBackoff is the coordinator's declaration of the batch job's waits:
// short, so that the integration test sees several polls in seconds.
var jobBackoff = work.Backoff{Initial: 200 * time.Millisecond, Max: 400 * time.Millisecond}

// batchJob is the "batch" target: a job at the fake batch service at
// base (http://127.0.0.1:PORT, run by the integration test), submitted
// with the Work's id as its idempotency key. Each poll says "polled
// <work id> <worker name>" on stdout.
func batchJob(base, name string, log *slog.Logger) *work.Job {
	hc := &http.Client{Timeout: 10 * time.Second}
	call := func(ctx context.Context, method, path string, q url.Values, v any) error {
		req, err := http.NewRequestWithContext(ctx, method, base+path+"?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("batch service: %s", resp.Status)
		}
		if v == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			return nil
		}
		return json.NewDecoder(resp.Body).Decode(v)
	}
	return &work.Job{
		Submit: func(ctx context.Context, key, input string) ([]byte, error) {
			var r struct{ Handle string }
			if err := call(ctx, http.MethodPost, "/submit", url.Values{"key": {key}, "input": {input}}, &r); err != nil {
				return nil, err
			}
			log.Info("job submitted", "work", key)
			return []byte(r.Handle), nil
		},
		Await: func(ctx context.Context, h []byte) (work.Poll, error) {
			var r struct {
				Key, State, Output string
			}
			if err := call(ctx, http.MethodGet, "/poll", url.Values{"handle": {string(h)}}, &r); err != nil {
				return work.Poll{}, err
			}
			fmt.Printf("polled %s %s\n", r.Key, name)
			switch r.State {
			case "done":
				return work.Poll{State: work.PollDone, Output: r.Output}, nil
			case "failed":
				return work.Poll{State: work.PollFailed}, nil
			}
			return work.Poll{State: work.PollWaiting}, nil
		},
		Cancel: func(ctx context.Context, h []byte) error {
			return call(ctx, http.MethodPost, "/cancel", url.Values{"handle": {string(h)}}, nil)
		},
	}
}
