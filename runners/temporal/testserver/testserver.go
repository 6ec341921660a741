// Package testserver is test support, not for applications: it starts
// the Temporal CLI's dev server (temporal server start-dev) as a process
// of its own, set up as the runner needs it, for the runner's own tests
// and those of other modules of this repository that run Work on
// Temporal (the Eino adapter's durable tests, the multi-process harness):
// on a free loopback port, headless, in memory (or on a database file in
// a directory, StartIn), with one partition per task queue and the owner
// search attribute (temporal.OwnerSearchAttribute, a Keyword) registered
// in its namespace. The binary is AGENTWORK_TEMPORAL_CLI, else built once
// from the repository's pinned tools module (tools/temporal) into
// $REPO/.cache/temporal/<key> (Binary). Nothing it starts listens beyond
// 127.0.0.1 or outlives Stop, or the process that started it.
package testserver

import (
	"context"
	"errors"
	"fmt"
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

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/temporal"
)

// Namespace is the namespace of every server: the dev server's own.
const Namespace = "default"

// Server is a running dev server. Client, Logs and Stop are safe for
// concurrent use, and Stop may be called more than once; Kill and
// Restart are one caller's, in turn.
type Server struct {
	// HostPort is its frontend's address, 127.0.0.1:<port>.
	HostPort string

	bin  string
	args []string
	env  []string
	dir  string
	keep bool // Stop leaves dir (StartIn's)
	logs *harness.LogBuffer

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	client client.Client
	once   sync.Once
}

// Start starts a server that keeps its state in memory and waits until
// it serves its namespace with the owner search attribute (at most a
// minute). Stop it with Stop.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "testserver-")
	if err != nil {
		return nil, err
	}
	s, err := start(dir, false)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.keep = false
	return s, nil
}

// StartIn starts a server that keeps its state in dir/temporal.db, which
// Stop leaves: Kill and Restart take it away and bring it back on the
// same database file and port, as a server that crashed and was
// restarted.
func StartIn(dir string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return start(dir, true)
}

// bindTries is how many times start picks a fresh port when the server
// could not bind one: a free port can be taken by another process (a
// parallel test package's server, an outgoing connection) between the
// pick and the server's bind.
const bindTries = 5

// errAddrInUse marks a server that exited because a port was taken.
var errAddrInUse = errors.New("a port was taken before the server bound it")

func start(dir string, durable bool) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		s, err := startOn(bin, dir, durable)
		if err == nil || !errors.Is(err, errAddrInUse) || try == bindTries {
			return s, err
		}
		// Nothing was served from dir: start again without its database.
		if durable {
			if err := removeDB(dir); err != nil {
				return nil, err
			}
		}
	}
}

// startOn starts a server on a fresh free port with its files in dir.
func startOn(bin, dir string, durable bool) (*Server, error) {
	port, err := pickPort()
	if err != nil {
		return nil, err
	}
	s := &Server{HostPort: "127.0.0.1:" + strconv.Itoa(port), bin: bin, dir: dir, keep: true, logs: &harness.LogBuffer{}}
	s.args = []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--headless", "--log-level", "warn",
		"--search-attribute", temporal.OwnerSearchAttribute + "=Keyword",
		// One partition per task queue (the default of four makes a task
		// wait, now and then, tens of seconds for a poller that only polls
		// another partition: a test's queues have few workers).
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1"}
	if durable {
		s.args = append(s.args, "--db-filename", filepath.Join(dir, "temporal.db"))
	}
	// HOME: an in-memory dev server keeps its cluster id under
	// $HOME/.config; this keeps it in dir, not in the user's home.
	s.env = append(os.Environ(), "HOME="+dir)
	if err := s.launch(); err != nil {
		return nil, err
	}
	if err := s.ready(time.Minute); err != nil {
		s.Stop()
		logs := s.logs.String()
		if strings.Contains(logs, "address already in use") {
			err = fmt.Errorf("%w: %w", errAddrInUse, err)
		}
		return nil, fmt.Errorf("testserver: the Temporal dev server did not become ready: %w\n%s", err, logs)
	}
	return s, nil
}

// launch starts the server's process in a process group of its own.
// The kernel SIGKILLs it when the thread that started it exits
// (Pdeathsig): in Go, when the process exits or dies, as the runtime
// ends no thread but one locked by a goroutine that exits.
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return nil
}

// ready waits until check passes, or the process exits, or limit.
func (s *Server) ready(limit time.Duration) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	deadline := time.Now().Add(limit)
	for d := 20 * time.Millisecond; ; d = min(2*d, 500*time.Millisecond) {
		select {
		case <-done:
			return errors.New("it exited")
		default:
		}
		err := s.check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timeout: %w", err)
		}
		time.Sleep(d) // polling an external process's readiness
	}
}

// check dials the server and asks for the namespace's search
// attributes, with a client of its own: after Restart, Client's client
// may still be waiting to reconnect. The first client that passes is
// kept as Client's.
func (s *Server) check() error {
	conn, err := net.DialTimeout("tcp", s.HostPort, time.Second)
	if err != nil {
		return err
	}
	_ = conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.HostPort, Namespace: Namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return err
	}
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: Namespace})
	if err == nil {
		if _, ok := resp.GetCustomAttributes()[temporal.OwnerSearchAttribute]; !ok {
			err = fmt.Errorf("the search attribute %s is not registered", temporal.OwnerSearchAttribute)
		}
	}
	s.mu.Lock()
	if err == nil && s.client == nil {
		s.client, c = c, nil
	}
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return err
}

// Client returns a client of the server in Namespace (its SDK logs
// discarded), which Stop closes. Callers must not close it.
func (s *Server) Client() client.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// Kill SIGKILLs the server (its process group) and waits until it
// exited; StartIn's database file stays.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// Restart starts a killed server again on its database file and port and
// waits until it is ready (at most two minutes). Client's client stays
// valid: it reconnects.
func (s *Server) Restart() error {
	if err := s.launch(); err != nil {
		return err
	}
	if err := s.ready(2 * time.Minute); err != nil {
		return fmt.Errorf("testserver: the restarted Temporal dev server did not become ready: %w\n%s", err, s.logs.String())
	}
	return nil
}

// Logs returns what the server wrote so far (its first MiB), across
// restarts.
func (s *Server) Logs() string { return s.logs.String() }

// Stop closes Client's client, SIGKILLs the server (its process group),
// waits until it exited and removes its files (Start's; StartIn's
// directory stays). It is idempotent.
func (s *Server) Stop() {
	s.once.Do(func() {
		s.mu.Lock()
		c := s.client
		s.mu.Unlock()
		if c != nil {
			c.Close()
		}
		s.Kill()
		if !s.keep {
			_ = os.RemoveAll(s.dir)
		}
	})
}

// removeDB removes StartIn's database file and SQLite's companions.
func removeDB(dir string) error {
	for _, f := range []string{"temporal.db", "temporal.db-wal", "temporal.db-shm", "temporal.db-journal"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// pickPort picks the server's port; tests replace it.
var pickPort = harness.FreePort
