package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
)

// cluster is a Temporal dev server with worker and coordinator processes
// on 127.0.0.1, every process's output in dir.
type cluster struct {
	self, temporal, dir string
	hostPort, queue     string
	jobs                string // the fake batch service's URL, for the workers' batch target

	mu      sync.Mutex
	procs   []*proc
	started map[string]string   // work id -> the worker that said it started it
	polled  map[string][]string // job work id -> the workers of its polls, in order
	cond    *sync.Cond
}

// proc is one child process; its stdout lines go to onLine, and stdout and
// stderr to dir/<name>.log.
type proc struct {
	name  string
	cmd   *exec.Cmd
	in    io.WriteCloser
	done  chan struct{}
	lines chan string // stdout lines (coordinators)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func newCluster(self, temporalBin, dir string) *cluster {
	c := &cluster{self: self, temporal: temporalBin, dir: dir, queue: "agentwork", started: map[string]string{}, polled: map[string][]string{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// spawn starts a child process, its output logged to dir/name.log.
func (c *cluster) spawn(name string, onLine func(string), bin string, args ...string) (*proc, error) {
	logf, err := os.OpenFile(filepath.Join(c.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, in: in, done: make(chan struct{})}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			fmt.Fprintf(logf, "stdout: %s\n", sc.Text())
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// kill SIGKILLs the process and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// startServer starts the dev server on a free port and waits until its
// frontend answers.
func (c *cluster) startServer(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.hostPort = "127.0.0.1:" + strconv.Itoa(port)
	p, err := c.spawn("temporal-server", nil, c.temporal, "server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--headless", "--log-level", "warn", "--search-attribute", "AgentworkOwner=Keyword",
		// One partition per task queue: each queue of the deployment has few pollers.
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1")
	if err != nil {
		return err
	}
	for {
		cl, err := client.Dial(client.Options{HostPort: c.hostPort, Namespace: namespace, Logger: slogAdapter{nopLogger()}})
		if err == nil {
			_, err = cl.CheckHealth(ctx, &client.CheckHealthRequest{})
			cl.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-p.done:
			return errors.New("the Temporal dev server exited (see " + filepath.Join(c.dir, "temporal-server.log") + ")")
		case <-ctx.Done():
			return fmt.Errorf("the Temporal dev server did not answer: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startWorker starts a worker process, with extra flags, and waits until
// it polls.
func (c *cluster) startWorker(name string, extra ...string) (*proc, error) {
	ready := make(chan struct{})
	var once sync.Once
	p, err := c.spawn(name, func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "ready":
			once.Do(func() { close(ready) })
		case len(f) == 3 && f[0] == "started":
			c.mu.Lock()
			c.started[f[1]] = f[2]
			c.cond.Broadcast()
			c.mu.Unlock()
		case len(f) == 3 && f[0] == "polled":
			c.mu.Lock()
			c.polled[f[1]] = append(c.polled[f[1]], f[2])
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}, c.self, append([]string{"worker", "-hostport", c.hostPort, "-queue", c.queue, "-name", name,
		"-spans", filepath.Join(c.dir, name+".spans"), "-jobs", c.jobs}, extra...)...)
	if err != nil {
		return nil, err
	}
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("worker %s exited (see its log)", name)
	case <-time.After(2 * time.Minute):
		p.kill()
		return nil, fmt.Errorf("worker %s did not start", name)
	}
}

// waitStarted waits until a worker says it started an attempt of id
// (after the attempts already seen, when since is that worker).
func (c *cluster) waitStarted(id, since string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if w, ok := c.started[id]; ok && w != since {
			return w, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no worker started Work %s within %s", id, timeout)
		}
		c.cond.Wait()
	}
}

// waitPolled waits until the polls of job id satisfy cond (the workers
// that made them, in order) and returns them.
func (c *cluster) waitPolled(id string, cond func([]string) bool, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if ws := c.polled[id]; cond(ws) {
			return append([]string(nil), ws...), nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("job %s: polls %v within %s", id, c.polled[id], timeout)
		}
		c.cond.Wait()
	}
}

// coordinator is a coordinator process driven line by line.
type coordinator struct {
	p *proc
}

// startCoordinator starts a coordinator process for owner, with extra
// flags, and waits until it is ready.
func (c *cluster) startCoordinator(name, owner string, extra ...string) (*coordinator, error) {
	lines := make(chan string, 64)
	p, err := c.spawn(name, func(l string) { lines <- l }, c.self, append([]string{"coordinator", "-hostport", c.hostPort,
		"-queue", c.queue, "-owner", owner, "-spans", filepath.Join(c.dir, name+".spans")}, extra...)...)
	if err != nil {
		return nil, err
	}
	p.lines = lines
	co := &coordinator{p: p}
	var ready struct{ Ready bool }
	if err := co.read(&ready); err != nil {
		p.kill()
		return nil, err
	}
	return co, nil
}

func (co *coordinator) read(v any) error {
	select {
	case l := <-co.p.lines:
		return json.Unmarshal([]byte(l), v)
	case <-co.p.done:
		return errors.New("the coordinator exited")
	case <-time.After(2 * time.Minute):
		return errors.New("the coordinator did not answer within 2 minutes")
	}
}

// do sends one command and decodes its answer into v; an {"error":...}
// answer is returned as an error.
func (co *coordinator) do(v any, cmd ...string) error {
	if _, err := fmt.Fprintln(co.p.in, strings.Join(cmd, " ")); err != nil {
		return err
	}
	var raw json.RawMessage
	if err := co.read(&raw); err != nil {
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

func (co *coordinator) start(label, input string) (string, error) {
	var r struct{ Work string }
	err := co.do(&r, "start", label, input)
	return r.Work, err
}

// settled reads id's result until it is terminal.
func (co *coordinator) settled(id string, timeout time.Duration) (resultReply, error) {
	deadline := time.Now().Add(timeout)
	for {
		var r resultReply
		if err := co.do(&r, "result", id); err != nil {
			return r, err
		}
		if isTerminal(r.Status.State) || time.Now().After(deadline) {
			return r, nil
		}
	}
}

type statusReply struct {
	Work struct {
		ID         string `json:"id"`
		Guarantees struct {
			Execution string `json:"execution"`
		} `json:"guarantees"`
	} `json:"work"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
}

type resultReply struct {
	Status statusReply `json:"status"`
	Result string      `json:"result"`
}

func isTerminal(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// stop ends every process (SIGKILL) and waits for each.
func (c *cluster) stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
}

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
