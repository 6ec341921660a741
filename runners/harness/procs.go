package harness

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Procs are the child processes of a driver, each one's stdout and stderr
// in Dir/<name>.log. The zero value with Dir set is ready; it is safe for
// concurrent use.
type Procs struct {
	Dir   string
	mu    sync.Mutex
	live  []*Proc // the ones StopAll ends
	every []*Proc
}

// Proc is one child process. Lines, when the spawner sets it, is a
// channel the spawner's onLine feeds (a coordinator's answers).
type Proc struct {
	Name  string
	Cmd   *exec.Cmd
	In    io.WriteCloser
	Done  chan struct{} // closed once it exited and its output is logged
	Lines chan string
}

// Spawn starts bin with args as the process name, each stdout line
// logged and given to onLine (nil: none). The child is SIGKILLed when
// the driver dies, even when the driver is killed.
func (ps *Procs) Spawn(name string, onLine func(string), bin string, args ...string) (*Proc, error) {
	logf, err := os.OpenFile(filepath.Join(ps.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &Proc{Name: name, Cmd: cmd, In: in, Done: make(chan struct{})}
	ps.mu.Lock()
	ps.live = append(ps.live, p)
	ps.every = append(ps.every, p)
	ps.mu.Unlock()
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
		close(p.Done)
	}()
	return p, nil
}

// Kill SIGKILLs the process and waits until it exited.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}

// StopAll SIGKILLs every process spawned since the last StopAll and waits
// for each.
func (ps *Procs) StopAll() {
	ps.mu.Lock()
	live := ps.live
	ps.live = nil
	ps.mu.Unlock()
	for _, p := range live {
		p.Kill()
	}
}

// All returns every process spawned.
func (ps *Procs) All() []*Proc {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]*Proc(nil), ps.every...)
}

// Named returns the live process of that name.
func (ps *Procs) Named(name string) (*Proc, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.live {
		if p.Name == name && !p.Exited() {
			return p, true
		}
	}
	return nil, false
}

// FreeAddr returns a loopback address (127.0.0.1:port) free now.
func FreeAddr() (string, error) {
	p, err := FreePort()
	return "127.0.0.1:" + strconv.Itoa(p), err
}

// FreePort returns a TCP port free on 127.0.0.1 now.
func FreePort() (int, error) {
	p, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}
