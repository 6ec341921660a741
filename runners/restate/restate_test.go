package restate_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// shared is the Restate server of the tests, started once per test binary
// (each test's services have a namespace of their own); TestMain stops it.
// It signs its requests with a key of its own (restatetest's request
// identity), and the Workers deploy starts check it (WithIdentityKeys):
// every test through deploy, the conformance suite included, runs with
// signed requests.
var shared struct {
	mu  sync.Mutex
	srv *restatetest.Server
	key ed25519.PrivateKey
	err error
}

func server(t testing.TB) *restatetest.Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		_, shared.key, shared.err = ed25519.GenerateKey(rand.Reader)
		if shared.err == nil {
			shared.srv, shared.err = restatetest.Start(restatetest.WithRequestIdentity(shared.key))
		}
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	shared.mu.Unlock()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

var namespaces atomic.Int64

// deploy starts a Worker (with the registry, checking the shared server's
// request identity) for targets and an Engine in a fresh namespace on the
// shared server; the test's end stops them.
func deploy(t testing.TB, targets map[string]restate.Child, opts ...restate.Option) *work.Engine {
	t.Helper()
	return deployWith(t, targets, nil, opts...)
}

// deployWith is deploy with keep, options the Worker keeps when it falls
// back to the default limits.
func deployWith(t testing.TB, targets map[string]restate.Child, keep []restate.Option, opts ...restate.Option) *work.Engine {
	t.Helper()
	s := server(t)
	base := append([]restate.Option{restate.WithServicePrefix("t" + strconv.FormatInt(namespaces.Add(1), 10)),
		restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin), restate.WithRPCTimeout(time.Minute),
		restate.WithIdentityKeys(s.IdentityKey)}, keep...)
	base = slices.Clip(base) // the appends below copy it
	opts = append(base, opts...)
	w, err := restate.NewWorker(targets, append(opts, restate.WithRegistry())...)
	if errors.Is(err, work.ErrInvalidLimit) {
		// NewWorker refuses an invalid limit as the Engine does: the
		// Worker (and the registry the Engine reads) runs with the
		// defaults, and the Engine shows the refusal (LimitValues).
		w, err = restate.NewWorker(targets, append(base, restate.WithRegistry())...)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e := restate.New(opts...)
	t.Cleanup(func() {
		_ = e.Close(context.Background())
		w.Stop()
	})
	return e
}

type harness struct{}

func (harness) NewEngine(t *testing.T, cfg enginetest.Config) *work.Engine {
	targets := map[string]restate.Child{}
	for label, c := range cfg.Children {
		targets[label] = restate.Child{Kind: c.Kind, Run: c.Run, Job: c.Job}
	}
	return deployWith(t, targets, []restate.Option{restate.WithContentKeys(contentKey)}, restate.WithOptions(cfg.Options()...),
		restate.WithOptions(work.WithObserver(cfg.Observer)))
}

// contentKey is the content key of the conformance suite's deployments:
// the suite runs with content sealed at rest (WithContentKeys), besides
// signed requests.
var contentKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return k
}()

func (harness) Capabilities() enginetest.Capabilities {
	return enginetest.Capabilities{
		Durable:        true,
		Attempt:        1,
		ExactWaitClock: true,
		Pools:          true,
		// A control object's handler that is retried after it reported
		// an event reports it again.
		AtLeastOnceEvents: true,
	}
}

// TestConformance runs the engine conformance suite against the Restate
// runner on a real Restate server, with its trust options on: the server
// signs its requests and the Worker refuses others (WithIdentityKeys),
// and content is sealed at rest (WithContentKeys).
func TestConformance(t *testing.T) {
	enginetest.Run(t, harness{})
}

var tokens atomic.Int64

func newToken() string {
	return strconv.FormatInt(tokens.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}
