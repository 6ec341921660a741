// Command batchjob shows an external job: a child made of a submit step
// and an await step (langchaingo.NewJob) at a batch service, here a fake
// one on 127.0.0.1. On the embedded scripted model (no keys, no network
// beyond loopback) the coordinator starts run_batch in the background,
// checks its status while the engine polls the service, awaits its result
// with the work tool and answers; the program prints a short transcript
// and what the service saw.
//
// The job is submitted once, with the Work's id as its idempotency key
// (the service deduplicates on it, which makes a retried submit safe).
// The engine then polls with backoff; between polls the Work holds no
// goroutine and no running slot, and a poll answering "waiting" (a
// reviewer at the service has not answered) delivers nothing to the
// model. The example's backoff is 10 ms doubling to 40 ms so that it
// ends at once; the default is 1 s doubling to 30 s.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/examples/internal/transcript"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

const task = "Run the nightly import batch and tell me how it went."

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "batchjob:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	seen := make(chan struct{}) // closed once the coordinator has seen the job running
	var once sync.Once
	svc := newBatchService(seen)
	defer svc.Close()

	events := &eventLog{waiting: make(chan struct{})}
	sup := work.New(work.WithObserver(events))
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sup.Close(closeCtx)
	}()

	client := &batchClient{base: svc.URL(), http: &http.Client{Timeout: 10 * time.Second}}
	runBatch := lc.NewJob("run_batch", "Runs an import batch at the batch service (a long job) and returns its summary.", work.Job{
		Submit:  client.submit,
		Await:   client.await,
		Backoff: work.Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond},
	})

	tr := &transcript.Transcript{W: w}
	sawRunning := func() {
		// Once submitted, the job waits: its Work is running but holds
		// no slot.
		select {
		case <-events.waiting:
		case <-time.After(10 * time.Second):
		}
		if snap, err := sup.Snapshot(ctx); err == nil {
			fmt.Fprintf(w, "   (engine: %d running slots in use, %d job waiting)\n", snap.SlotsInUse, snap.Waiting)
		}
		once.Do(func() { close(seen) })
	}
	kit, err := lc.Prepare(ctx, sup, tr.Model(scripted.New(script(sawRunning)...)),
		[]tools.Tool{lc.Backgroundable(runBatch)})
	if err != nil {
		return err
	}
	defer kit.Release()

	fmt.Fprintf(w, "batchjob demo (scripted model, a fake batch service on 127.0.0.1)\ntask: %s\n\n", task)
	agent := agents.NewOneShotAgent(kit.Model(), tr.Tools(kit.Tools()))
	answer, err := chains.Run(ctx, agents.NewExecutor(agent, agents.WithMaxIterations(6)), task)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	fmt.Fprintf(w, "\n== answer ==\n%s\n\n== the batch service saw ==\n", answer)
	for _, line := range svc.Log() {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "\n== the engine reported ==\n%s\n", strings.Join(events.lines(), "\n"))
	return nil
}

// eventLog is an Observer that records the lifecycle events of the Work
// (their types and poll outcomes only: events carry no content).
type eventLog struct {
	observe.NopObserver
	mu      sync.Mutex
	events  []string
	waiting chan struct{} // closed at the first EventWaiting
	once    sync.Once
}

func (l *eventLog) Event(_ context.Context, e observe.Event) {
	if e.WorkID == "" {
		return
	}
	s := string(e.Type)
	if e.Type == observe.EventPolled {
		s += ": " + e.Poll
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.Type == observe.EventWaiting {
		l.once.Do(func() { close(l.waiting) })
	}
	l.events = append(l.events, s)
}

func (l *eventLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// batchClient is the job's submit and await steps over the service's
// HTTP API. Nothing of a submit survives into the wait but the handle (the
// service's job id).
type batchClient struct {
	base string
	http *http.Client
}

// submit posts the input with key, the Work's id, as the idempotency key.
func (c *batchClient) submit(ctx context.Context, key, input string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/jobs", strings.NewReader(input))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Idempotency-Key", key)
	var out struct {
		ID string `json:"id"`
	}
	if err := c.do(req, &out); err != nil {
		return nil, err
	}
	return []byte(out.ID), nil
}

// await polls the job once: done with its output, or still waiting (the
// service's "running" and "waiting" both keep the engine polling).
func (c *batchClient) await(ctx context.Context, handle []byte) (work.Poll, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/jobs/"+string(handle), nil)
	if err != nil {
		return work.Poll{}, err
	}
	var st jobStatus
	if err := c.do(req, &st); err != nil {
		return work.Poll{}, err // transient: the engine polls again with backoff
	}
	switch st.State {
	case "done":
		return work.Poll{State: work.PollDone, Output: st.Output}, nil
	case "running", "waiting":
		return work.Poll{State: work.PollWaiting}, nil
	}
	return work.Poll{State: work.PollFailed, Class: "batch_failed"}, nil
}

func (c *batchClient) do(req *http.Request, v any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("batch service: %s", resp.Status)
	}
	return json.NewDecoder(bytes.NewReader(body)).Decode(v)
}

var workID = regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)

// script is the coordinator's scripted model, one step per model request.
// With a OneShot agent the model writes each tool's JSON input after
// "Action Input:".
func script(sawRunning func()) []scripted.Step {
	id := func(req scripted.Request) string {
		if m := workID.FindStringSubmatch(req.Text()); m != nil {
			return m[1]
		}
		return ""
	}
	return []scripted.Step{
		scripted.ReActCall("run_batch", `{"input":"nightly-import","run_in_background":true}`),
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.ReActCall("work", `{"action":"status","id":"`+id(req)+`"}`)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			sawRunning()
			return scripted.ReActCall("work", `{"action":"result","id":"`+id(req)+`","timeout":"30s"}`)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			text := req.Messages[0].Text()
			result := strings.TrimSpace(text[strings.LastIndex(text, "Observation: ")+len("Observation: "):])
			return scripted.ReActFinal("The nightly import finished. " + result)
		}),
	}
}
