package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
)

// cluster is a Restate server with a registry process, service processes
// behind a balancer, and coordinator processes, on 127.0.0.1, every
// process's output in dir.
type cluster struct {
	self, dir    string
	srv          *restatetest.Server
	lb           *balancer
	registryAddr string
	base         string // the server's base directory, kept across restarts ("": a temporary one)

	harness.Procs // the processes, their output in dir

	mu      sync.Mutex
	started map[string][]string // work id -> the service processes that said they started it, in order
	cond    *sync.Cond
}

type proc = harness.Proc

func newCluster(self, dir string) *cluster {
	c := &cluster{self: self, dir: dir, Procs: harness.Procs{Dir: dir}, started: map[string][]string{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// spawn starts this binary with args as the process name.
func (c *cluster) spawn(name string, onLine func(string), args ...string) (*proc, error) {
	return c.Spawn(name, onLine, c.self, args...)
}

// start starts the Restate server, the balancer and the registry process.
func (c *cluster) start() error {
	// The server signs its requests; every service process checks them.
	key, err := newIdentity()
	if err != nil {
		return err
	}
	var srv *restatetest.Server
	if c.base != "" {
		srv, err = restatetest.StartIn(c.base, restatetest.WithRequestIdentity(key))
	} else {
		srv, err = restatetest.Start(restatetest.WithRequestIdentity(key))
	}
	if err != nil {
		return err
	}
	c.srv = srv
	if err := os.Setenv(identityKeyEnv, srv.IdentityKey); err != nil {
		return err
	}
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
		addr, err := harness.FreeAddr()
		if err != nil {
			return nil, err
		}
		c.registryAddr = addr
	}
	return c.startService("registry", "-registry", "-listen", c.registryAddr)
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
	case <-p.Done:
		return nil, fmt.Errorf("service %s exited (see %s.log)", name, name)
	case <-time.After(2 * time.Minute):
		p.Kill()
		return nil, fmt.Errorf("service %s did not start", name)
	}
}

// startWorker starts a service process of the targets behind the
// balancer, on a free port of its own, with extra flags.
func (c *cluster) startWorker(name string, extra ...string) (*proc, error) {
	addr, err := harness.FreeAddr()
	if err != nil {
		return nil, err
	}
	c.lb.add(addr) // refused until it listens: Restate's discovery retries
	p, err := c.startService(name, append([]string{"-listen", addr, "-advertise", c.lb.URL}, extra...)...)
	if err != nil {
		c.lb.remove(addr)
		return nil, err
	}
	return p, nil
}

// killWorker SIGKILLs a service process behind the balancer. It stays in
// the rotation: the balancer finds it gone.
func (c *cluster) killWorker(p *proc) { p.Kill() }

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
type coordinator = harness.Coordinator

// startCoordinator starts a coordinator process for owner, with extra
// flags, and waits until it is ready.
func (c *cluster) startCoordinator(name, owner string, extra ...string) (*coordinator, error) {
	return c.StartCoordinator(name, c.self, append([]string{"coordinator", "-ingress", c.srv.Ingress,
		"-owner", owner, "-spans", filepath.Join(c.dir, name+".spans")}, extra...)...)
}

// stop ends every process (SIGKILL), the balancer and the server.
func (c *cluster) stop() {
	c.StopAll()
	if c.lb != nil {
		c.lb.close()
	}
	if c.srv != nil {
		c.srv.Stop()
		_ = os.WriteFile(filepath.Join(c.dir, "restate-server.out"), []byte(c.srv.Logs()), 0o644)
	}
}
