package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// batchService is a fake external batch service on 127.0.0.1: POST /jobs
// submits a job (the Idempotency-Key header deduplicates a retried
// submit: the same key gets the same job), GET /jobs/{id} reports its
// state. A job takes donePolls polls: running, then waiting for a
// reviewer (a person at the service who has not answered yet), running
// again, then done. So that the transcript is the same on every run, the
// service answers no poll until release is closed (the example closes it
// once the coordinator has seen the job running; a real service simply
// takes its time).
type batchService struct {
	srv     *httptest.Server
	release <-chan struct{}

	mu    sync.Mutex
	byKey map[string]string // idempotency key -> job id
	jobs  map[string]*batchJob
	log   []string
}

type batchJob struct {
	input string
	polls int
}

// donePolls is how many polls a job takes; reviewPoll is the poll that
// answers "waiting" (the reviewer has not answered).
const (
	donePolls  = 4
	reviewPoll = 2
)

// jobStatus is GET /jobs/{id}'s reply.
type jobStatus struct {
	State  string `json:"state"` // running, waiting, done
	Detail string `json:"detail,omitempty"`
	Output string `json:"output,omitempty"`
}

func newBatchService(release <-chan struct{}) *batchService {
	b := &batchService{release: release, byKey: map[string]string{}, jobs: map[string]*batchJob{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /jobs", b.submit)
	mux.HandleFunc("GET /jobs/{id}", b.status)
	b.srv = httptest.NewServer(mux) // 127.0.0.1, a free port
	return b
}

func (b *batchService) URL() string { return b.srv.URL }

func (b *batchService) Close() { b.srv.Close() }

func (b *batchService) logf(format string, args ...any) {
	b.log = append(b.log, fmt.Sprintf(format, args...))
}

// Log returns what the service saw, in order.
func (b *batchService) Log() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

func (b *batchService) submit(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	body, err := io.ReadAll(r.Body)
	if err != nil || key == "" {
		http.Error(w, "an Idempotency-Key and a body are required", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	id, seen := b.byKey[key]
	if !seen {
		id = fmt.Sprintf("batch-%d", len(b.jobs)+1)
		b.byKey[key] = id
		b.jobs[id] = &batchJob{input: strings.TrimSpace(string(body))}
		b.logf("submit key=%s input=%q -> %s", key, b.jobs[id].input, id)
	} else {
		b.logf("submit key=%s again -> %s (deduplicated)", key, id)
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

func (b *batchService) status(w http.ResponseWriter, r *http.Request) {
	// No poll is answered before release is closed (a slow first answer).
	select {
	case <-b.release:
	case <-r.Context().Done():
		return
	}
	id := r.PathValue("id")
	b.mu.Lock()
	defer b.mu.Unlock()
	j, ok := b.jobs[id]
	if !ok {
		http.NotFound(w, r)
		return
	}
	j.polls++
	st := jobStatus{State: "running"}
	switch {
	case j.polls == reviewPoll:
		st = jobStatus{State: "waiting", Detail: "a reviewer has not answered yet"}
	case j.polls >= donePolls:
		st = jobStatus{State: "done", Output: "Processed " + j.input + ": 1,204 rows, 0 rejected."}
	}
	b.logf("poll %d of %s -> %s", j.polls, id, st.State)
	_ = json.NewEncoder(w).Encode(st)
}
