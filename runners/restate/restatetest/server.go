// Package restatetest is test support, not for applications: it starts
// a real Restate server for tests (the runner's own, and those of other
// modules of this repository that run Work on Restate, such as the Eino
// adapter's durable tests): the restate-server binary
// (AGENTWORK_RESTATE_SERVER, else installed once from npm into
// $REPO/.cache/restate/<version>), on free loopback ports, with a
// temporary base directory, and stops it. Nothing it starts listens
// beyond 127.0.0.1 or outlives Stop.
package restatetest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mr-tron/base58"

	"github.com/agentwork/agentwork/runners/harness"
)

// Version is the Restate server version the tests run.
const Version = "1.7.12"

// Server is a running Restate server.
type Server struct {
	// Ingress and Admin are the base URLs of its ingress and admin APIs.
	Ingress, Admin string
	// IdentityKey is the public key the server signs its requests to
	// deployments with, in the form a deployment checks them against
	// ("publickeyv1_...", restate.WithIdentityKeys); "" when it does not
	// sign (WithRequestIdentity).
	IdentityKey string

	bin  string
	env  []string
	cmd  *exec.Cmd
	dir  string
	keep bool // Stop leaves dir (StartIn's)
	logs *harness.LogBuffer
	done chan struct{}
	once sync.Once
}

// Option configures a server that Start or StartIn starts.
type Option func(*options)

type options struct {
	identity ed25519.PrivateKey
}

// WithRequestIdentity has the server sign every request it makes to a
// deployment (discovery and invocations) with key, Restate's request
// identity (v1): the key is written as a PKCS#8 PEM into the server's
// base directory and given to the server as its
// request-identity-private-key-pem-file; Start returns once the server
// logged that it loaded it under the key id of key's public key
// (Server.IdentityKey).
func WithRequestIdentity(key ed25519.PrivateKey) Option {
	return func(o *options) { o.identity = key }
}

// IdentityKey returns pub in the form Restate names request identity
// keys and restate.WithIdentityKeys takes: "publickeyv1_" and pub in
// base58.
func IdentityKey(pub ed25519.PublicKey) string { return "publickeyv1_" + base58.Encode(pub) }

// Start starts a server and waits until its admin and ingress answer
// (at most a minute).
func Start(opts ...Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "restatetest-")
	if err != nil {
		return nil, err
	}
	s, err := start(dir, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.keep = false
	return s, nil
}

// StartIn starts a server whose state is kept in dir (its base
// directory), which Stop leaves: Kill and Restart take it away and bring
// it back on the same base directory, node name and ports, as a server
// that crashed and was restarted.
func StartIn(dir string, opts ...Option) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return start(dir, opts)
}

// bindTries is how many times start picks fresh ports when the server
// could not bind one: a free port can be taken by another process (a
// parallel test package's server, an outgoing connection) between
// freePorts and the server's bind.
const bindTries = 5

// errAddrInUse marks a server that exited because a port was taken.
var errAddrInUse = errors.New("a port was taken before the server bound it")

func start(dir string, opts []Option) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	for try := 1; ; try++ {
		s, err := startOn(bin, dir, o)
		if err == nil || !errors.Is(err, errAddrInUse) || try == bindTries {
			return s, err
		}
		// Nothing was served from dir: start again from an empty one.
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
}

// identityFile is the request identity key's file in the base directory.
const identityFile = "request-identity.pem"

// startOn starts a server on fresh free ports with base directory dir,
// which it leaves in place when the server does not become ready.
func startOn(bin, dir string, o options) (*Server, error) {
	ports, err := pickPorts(4)
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	env := append(os.Environ(),
		"RESTATE_NODE_NAME=agentwork-test",
		"RESTATE_BASE_DIR="+dir,
		"RESTATE_BIND_ADDRESS="+addr(ports[0]),
		"RESTATE_ADVERTISED_ADDRESS=http://"+addr(ports[0]),
		"RESTATE_INGRESS__BIND_ADDRESS="+addr(ports[1]),
		"RESTATE_INGRESS__ADVERTISED_INGRESS_ENDPOINT=http://"+addr(ports[1]),
		"RESTATE_ADMIN__BIND_ADDRESS="+addr(ports[2]),
		"RESTATE_ADMIN__QUERY_ENGINE__PGSQL_BIND_ADDRESS="+addr(ports[3]),
		"RESTATE_DISABLE_TELEMETRY=true",
		"RESTATE_DEFAULT_NUM_PARTITIONS=4",
		"RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE=256MB",
		"RESTATE_LOG_DISABLE_ANSI_CODES=true",
	)
	s := &Server{Ingress: "http://" + addr(ports[1]), Admin: "http://" + addr(ports[2]),
		bin: bin, dir: dir, keep: true, logs: &harness.LogBuffer{}}
	if o.identity != nil {
		der, err := x509.MarshalPKCS8PrivateKey(o.identity)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(dir, identityFile)
		if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, err
		}
		s.IdentityKey = IdentityKey(o.identity.Public().(ed25519.PublicKey))
		// The key's loading is logged at info.
		env = append(env, "RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE="+file,
			"RESTATE_LOG_FILTER=warn,restate_service_client::request_identity=info")
	} else {
		env = append(env, "RESTATE_LOG_FILTER=warn")
	}
	s.env = env
	if err := s.launch(); err != nil {
		return nil, err
	}
	if err := s.ready(time.Minute); err != nil {
		s.Stop()
		logs := s.logs.String()
		if strings.Contains(logs, "Address in use") {
			err = fmt.Errorf("%w: %w", errAddrInUse, err)
		}
		return nil, fmt.Errorf("restatetest: the server did not become ready: %w\n%s", err, logs)
	}
	if s.IdentityKey != "" {
		if err := s.loadedIdentity(time.Minute); err != nil {
			s.Stop()
			return nil, fmt.Errorf("restatetest: %w\n%s", err, s.logs.String())
		}
	}
	return s, nil
}

// launch starts the server's process.
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, "--no-logo", "--listen-mode", "tcp")
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	s.cmd, s.done = cmd, done
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return nil
}

// Kill SIGKILLs the server (its process group) and waits until it
// exited; its base directory stays.
func (s *Server) Kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Restart starts a killed server again on its base directory, node name
// and ports, and waits until its admin and ingress answer (at most two
// minutes).
func (s *Server) Restart() error {
	if err := s.launch(); err != nil {
		return err
	}
	if err := s.ready(2 * time.Minute); err != nil {
		return fmt.Errorf("restatetest: the restarted server did not become ready: %w", err)
	}
	return nil
}

func (s *Server) ready(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: 2 * time.Second}
	for d := 20 * time.Millisecond; ; d = min(2*d, 500*time.Millisecond) {
		select {
		case <-s.done:
			return errors.New("it exited")
		default:
		}
		okA := get(c, s.Admin+"/health") == nil
		okI := get(c, s.Ingress+"/restate/health") == nil
		if okA && okI {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("timeout")
		}
		time.Sleep(d) // polling an external process's readiness
	}
}

// loadedIdentity waits until the server logged that it loaded the
// request identity key with IdentityKey's key id.
func (s *Server) loadedIdentity(limit time.Duration) error {
	want := `kid: "` + s.IdentityKey + `"`
	deadline := time.Now().Add(limit)
	for d := 20 * time.Millisecond; ; d = min(2*d, 500*time.Millisecond) {
		if logs := s.logs.String(); strings.Contains(logs, "Loaded request identity key") && strings.Contains(logs, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not log that it loaded the request identity key %s", s.IdentityKey)
		}
		time.Sleep(d) // polling an external process's output
	}
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// Register registers the deployment serving at uri (an SDK endpoint
// speaking HTTP/2 cleartext), forcing over an earlier registration of
// the same uri.
func (s *Server) Register(ctx context.Context, uri string) error {
	return Register(ctx, s.Admin, uri)
}

// Register registers the deployment at uri with the admin API at admin.
func Register(ctx context.Context, admin, uri string) error {
	body, _ := json.Marshal(map[string]any{"uri": uri, "force": true})
	var last error
	for try := 0; try < 20; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, admin+"/deployments", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			last = fmt.Errorf("registering %s: %s: %s", uri, resp.Status, strings.TrimSpace(string(b)))
			if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusNotFound {
				return last
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond << min(try, 4)):
		}
	}
	return last
}

// Logs returns what the server wrote so far.
func (s *Server) Logs() string { return s.logs.String() }

// Stop kills the server (its process group), waits for it and removes
// its base directory. It is idempotent.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
		if !s.keep {
			_ = os.RemoveAll(s.dir)
		}
	})
}

// pickPorts picks the ports of a server; tests replace it.
var pickPorts = harness.FreePorts

// Binary returns the restate-server binary: AGENTWORK_RESTATE_SERVER when
// set, else the one cached under the repository's .cache/restate/<Version>,
// installed there with npm the first time. Concurrent callers (test
// binaries of several packages) install it once: the install holds an
// exclusive lock on .cache/restate/<Version>.lock and goes into a
// temporary directory that is renamed into place only when it holds the
// binary, so no caller ever sees a partial install.
func Binary() (string, error) {
	if b := os.Getenv("AGENTWORK_RESTATE_SERVER"); b != "" {
		return b, nil
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("restatetest: %w (set AGENTWORK_RESTATE_SERVER)", err)
	}
	rel := filepath.Join("node_modules", "@restatedev", "restate-server-linux-x64", "bin", "restate-server")
	return harness.Install(filepath.Join(root, ".cache", "restate", Version), rel, func(tmp string) error {
		cmd := exec.Command("npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp, "@restatedev/restate-server@"+Version)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("restatetest: npm install of the Restate server %s: %v\n%s", Version, err, out)
		}
		return nil
	})
}
