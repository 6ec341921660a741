package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Coordinator is a coordinator process driven line by line (the package
// doc's protocol).
type Coordinator struct {
	P *Proc
}

// StartCoordinator spawns a coordinator process (bin args, as Spawn) and
// waits until it is ready.
func (ps *Procs) StartCoordinator(name, bin string, args ...string) (*Coordinator, error) {
	lines := make(chan string, 64)
	p, err := ps.Spawn(name, func(l string) { lines <- l }, bin, args...)
	if err != nil {
		return nil, err
	}
	p.Lines = lines
	co := &Coordinator{P: p}
	var ready struct{ Ready bool }
	if err := co.Read(&ready); err != nil {
		p.Kill()
		return nil, err
	}
	return co, nil
}

// Read decodes the coordinator's next answer into v, within 2 minutes.
func (co *Coordinator) Read(v any) error {
	select {
	case l := <-co.P.Lines:
		return json.Unmarshal([]byte(l), v)
	case <-co.P.Done:
		return errors.New("the coordinator exited")
	case <-time.After(2 * time.Minute):
		return errors.New("the coordinator did not answer within 2 minutes")
	}
}

// Do sends one command and decodes its answer into v (nil: none); an
// {"error":...} answer is returned as an error.
func (co *Coordinator) Do(v any, cmd ...string) error {
	if _, err := fmt.Fprintln(co.P.In, strings.Join(cmd, " ")); err != nil {
		return err
	}
	var raw json.RawMessage
	if err := co.Read(&raw); err != nil {
		return err
	}
	var e struct{ Error, Detail string }
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s (%s)", cmd[0], e.Error, e.Detail)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// Start starts a Work of label with input and returns its id.
func (co *Coordinator) Start(label, input string) (string, error) {
	var r struct{ Work string }
	err := co.Do(&r, "start", label, input)
	return r.Work, err
}

// Settled reads id's result until it is terminal or timeout passed.
func (co *Coordinator) Settled(id string, timeout time.Duration) (Result, error) {
	deadline := time.Now().Add(timeout)
	for {
		var r Result
		if err := co.Do(&r, "result", id); err != nil {
			return r, err
		}
		if IsTerminal(r.Status.State) || time.Now().After(deadline) {
			return r, nil
		}
	}
}

// Status is a coordinator's status answer, decoded (the model's JSON).
type Status struct {
	Work struct {
		ID         string `json:"id"`
		Guarantees struct {
			Execution string `json:"execution"`
		} `json:"guarantees"`
	} `json:"work"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
}

// Result is a coordinator's result answer (and, on Restate's driver, its
// status answer), decoded: the failure class beside the status, for the
// application.
type Result struct {
	Status Status `json:"status"`
	Class  string `json:"class"`
	Result string `json:"result"`
}

// IsTerminal reports whether a status's state is terminal.
func IsTerminal(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }
