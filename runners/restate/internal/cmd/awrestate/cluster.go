package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentwork/agentwork/runners/restate/internal/restatetest"
)

// cluster is a Restate server with a registry process, service processes
// behind a balancer, and coordinator processes, on 127.0.0.1, every
// process's output in dir.
type cluster struct {
	self, dir    string
	srv          *restatetest.Server
	lb           *balancer
	registryAddr string

	mu        sync.Mutex
	procs     []*proc // the ones stop ends
	everyProc []*proc
	started   map[string][]string // work id -> the service processes that said they started it, in order
	cond      *sync.Cond
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

func newCluster(self, dir string) *cluster {
	c := &cluster{self: self, dir: dir, started: map[string][]string{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// spawn starts a child process, its output logged to dir/name.log.
func (c *cluster) spawn(name string, onLine func(string), args ...string) (*proc, error) {
	logf, err := os.OpenFile(filepath.Join(c.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.self, args...)
	cmd.Stderr = logf
	// A child dies with the driver, even when the driver is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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
	c.everyProc = append(c.everyProc, p)
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

// start starts the Restate server, the balancer and the registry process.
func (c *cluster) start() error {
	srv, err := restatetest.Start()
	if err != nil {
		return err
	}
	c.srv = srv
	if c.lb, err = newBalancer(); err != nil {
		return err
	}
	_, err = c.startRegistry()
	return err
}

// startRegistry starts the registry process; it listens where the first
// one did, so that a restarted registry serves the same deployment URL.
func (c *cluster) startRegistry() (*proc, error) {
	if c.registryAddr == "" {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		c.registryAddr = addr
	}
	return c.startService("registry", "-registry", "-listen", c.registryAddr)
}

// freeAddr is a free loopback address (free when asked).
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startService starts a service process with extra flags and waits until
// it registered its deployment.
func (c *cluster) startService(name string, extra ...string) (*proc, error) {
	ready := make(chan struct{})
	var once sync.Once
	p, err := c.spawn(name, func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "ready":
			once.Do(func() { close(ready) })
		case len(f) == 3 && f[0] == "started":
			c.mu.Lock()
			c.started[f[1]] = append(c.started[f[1]], f[2])
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}, append([]string{"service", "-ingress", c.srv.Ingress, "-admin", c.srv.Admin, "-name", name,
		"-spans", filepath.Join(c.dir, name+".spans")}, extra...)...)
	if err != nil {
		return nil, err
	}
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("service %s exited (see %s.log)", name, name)
	case <-time.After(2 * time.Minute):
		p.kill()
		return nil, fmt.Errorf("service %s did not start", name)
	}
}

// startWorker starts a service process of the targets behind the
// balancer, on a free port of its own.
func (c *cluster) startWorker(name string) (*proc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	c.lb.add(addr) // refused until it listens: Restate's discovery retries
	p, err := c.startService(name, "-listen", addr, "-advertise", c.lb.URL)
	if err != nil {
		c.lb.remove(addr)
		return nil, err
	}
	return p, nil
}

// killWorker SIGKILLs a service process behind the balancer. It stays in
// the rotation: the balancer finds it gone.
func (c *cluster) killWorker(p *proc) { p.kill() }

// waitStarted waits until the n-th attempt of id started, and returns the
// service process that said so.
func (c *cluster) waitStarted(id string, n int, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if ws := c.started[id]; len(ws) >= n {
			return ws[n-1], nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("attempt %d of Work %s did not start within %s", n, id, timeout)
		}
		c.cond.Wait()
	}
}

// coordinator is a coordinator process driven line by line.
type coordinator struct {
	p *proc
}

// startCoordinator starts a coordinator process for owner and waits until
// it is ready.
func (c *cluster) startCoordinator(name, owner string) (*coordinator, error) {
	lines := make(chan string, 64)
	p, err := c.spawn(name, func(l string) { lines <- l }, "coordinator", "-ingress", c.srv.Ingress,
		"-owner", owner, "-spans", filepath.Join(c.dir, name+".spans"))
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

// resultReply is a coordinator's status or result answer, decoded.
type resultReply struct {
	Status struct {
		Work struct {
			ID         string `json:"id"`
			Guarantees struct {
				Execution string `json:"execution"`
			} `json:"guarantees"`
		} `json:"work"`
		State   string `json:"state"`
		Attempt int    `json:"attempt"`
	} `json:"status"`
	Class  string `json:"class"`
	Result string `json:"result"`
}

func isTerminal(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// stop ends every process (SIGKILL), the balancer and the server.
func (c *cluster) stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	if c.lb != nil {
		c.lb.close()
	}
	if c.srv != nil {
		c.srv.Stop()
		_ = os.WriteFile(filepath.Join(c.dir, "restate-server.out"), []byte(c.srv.Logs()), 0o644)
	}
}

// all returns every process started.
func (c *cluster) all() []*proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*proc(nil), c.everyProc...)
}

// named returns the live process of that name.
func (c *cluster) named(name string) (*proc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.name != name {
			continue
		}
		select {
		case <-p.done:
		default:
			return p, true
		}
	}
	return nil, false
}
