package restate_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// trustBase is a test's own namespace on the shared server and its
// options, its Worker checking the server's request identity.
func trustBase(t *testing.T, name string) (string, []restate.Option) {
	s := server(t)
	ns := name + strconv.FormatInt(namespaces.Add(1), 10)
	return ns, []restate.Option{restate.WithServicePrefix(ns),
		restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin), restate.WithRPCTimeout(time.Minute),
		restate.WithIdentityKeys(s.IdentityKey)}
}

func startWorker(t *testing.T, targets map[string]restate.Child, opts ...restate.Option) *restate.Worker {
	t.Helper()
	w, err := restate.NewWorker(targets, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func newEngine(t *testing.T, opts ...restate.Option) *work.Engine {
	e := restate.New(opts...)
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

// settle waits for Work id's result.
func settle(t *testing.T, e *work.Engine, o work.Owner, id string) (work.Status, string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, out, err := e.Result(t.Context(), o, id, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() {
			return st, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("Work %s did not settle: %+v", id, st)
		}
	}
}

// signedJWT is a v1 request identity token for path signed with key, as
// Restate makes them (EdDSA, the key id its public key's publickeyv1_
// form, the path as audience), valid from nbf to exp.
func signedJWT(key ed25519.PrivateKey, path string, nbf, exp time.Time) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT",
		"kid": restatetest.IdentityKey(key.Public().(ed25519.PublicKey))})
	claims, _ := json.Marshal(map[string]any{"aud": path, "nbf": nbf.Unix(), "iat": nbf.Unix(), "exp": exp.Unix()})
	in := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	return in + "." + enc.EncodeToString(ed25519.Sign(key, []byte(in)))
}

// TestIdentityRefusals: a Worker given the server's request identity key
// (WithIdentityKeys) serves the server's signed requests (a Work
// completes) and refuses, with 401, a direct request that is unsigned,
// signed by another key, signed for another path, or expired; the same
// request signed by the server's key passes the check. An invalid key
// makes NewWorker fail.
func TestIdentityRefusals(t *testing.T) {
	_, base := trustBase(t, "identity")
	var ran atomic.Int64
	w := startWorker(t, map[string]restate.Child{"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) {
		ran.Add(1)
		return "echo " + in, nil
	}}}, append(base, restate.WithRegistry())...)
	e := newEngine(t, base...)
	o := work.NewOwner("identity-" + newToken())
	ref, err := e.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, e, o, ref.ID); st.State != work.StateCompleted || out != "echo x" {
		t.Fatalf("a Work through the signing server: %+v %q", st, out)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Now()
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true) // the Worker serves HTTP/2 cleartext
	hc := &http.Client{Timeout: 10 * time.Second, Transport: h2c}
	defer hc.CloseIdleConnections()
	call := func(path, jwt string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, w.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if jwt != "" {
			req.Header.Set("X-Restate-Signature-Scheme", "v1")
			req.Header.Set("X-Restate-Jwt-V1", jwt)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	const path = "/discover"
	for _, tc := range []struct {
		name string
		jwt  string
		want bool // passes the check
	}{
		{"unsigned", "", false},
		{"signed by another key", signedJWT(other, path, now.Add(-time.Second), now.Add(time.Minute)), false},
		{"signed for another path", signedJWT(shared.key, "/invoke/x/y", now.Add(-time.Second), now.Add(time.Minute)), false},
		{"expired", signedJWT(shared.key, path, now.Add(-time.Hour), now.Add(-time.Minute)), false},
		{"signed by the server's key", signedJWT(shared.key, path, now.Add(-time.Second), now.Add(time.Minute)), true},
	} {
		code := call(path, tc.jwt)
		if (code != http.StatusUnauthorized) != tc.want {
			t.Errorf("%s: the Worker answered %d; want refused (401): %v", tc.name, code, !tc.want)
		}
	}
	// An invocation path, unsigned: refused before any handler.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, w.URL()+"/invoke/x.Control/Peek", strings.NewReader("x"))
	req.Header.Set("Content-Type", "application/vnd.restate.invocation.v5")
	if resp, err := hc.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unsigned invocation: %v %v; want 401", resp, err)
	} else {
		_ = resp.Body.Close()
	}
	if ran.Load() != 1 {
		t.Errorf("the child ran %d times; want 1", ran.Load())
	}
	if _, err := restate.NewWorker(nil, append(base, restate.WithRegistry(), restate.WithIdentityKeys("publickeyv1_notbase58!"))...); err == nil ||
		!strings.Contains(err.Error(), "WithIdentityKeys") {
		t.Errorf("NewWorker with an invalid identity key: %v", err)
	}
}

// bearer adds an Authorization header to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// guarded is a stand-in for a protected API in front of target: it
// refuses (401) a request without the bearer token and relays the others;
// refused and relayed count them.
func guarded(t *testing.T, target, token string, refused, relayed *atomic.Int64) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = tr
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"unauthorized"}`))
			return
		}
		relayed.Add(1)
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return srv.URL
}

// TestHTTPClientCredentials: behind an ingress and an admin API that
// refuse calls without credentials, a Worker and an Engine given an HTTP
// client that adds them (WithHTTPClient) register, run a Work and read
// the deployment view; without it the Engine's Start and the Worker's
// registration are refused (ErrUnavailable; an error).
func TestHTTPClientCredentials(t *testing.T) {
	s := server(t)
	token := newToken()
	var ingressRefused, ingressRelayed, adminRefused, adminRelayed atomic.Int64
	ingress := guarded(t, s.Ingress, token, &ingressRefused, &ingressRelayed)
	admin := guarded(t, s.Admin, token, &adminRefused, &adminRelayed)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: bearer{token, tr}}
	base := []restate.Option{restate.WithServicePrefix("creds" + strconv.FormatInt(namespaces.Add(1), 10)),
		restate.WithIngress(ingress), restate.WithAdmin(admin), restate.WithRPCTimeout(time.Minute),
		restate.WithIdentityKeys(s.IdentityKey)}
	targets := map[string]restate.Child{"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) {
		return "echo " + in, nil
	}}}

	// Without the client: refused.
	bare, err := restate.NewWorker(targets, append(base, restate.WithRegistry())...)
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.Start(t.Context()); err == nil || adminRefused.Load() == 0 {
		bare.Stop()
		t.Fatalf("a Worker without credentials registered through the protected admin API (%v, %d refused)", err, adminRefused.Load())
	}
	bare.Stop()

	startWorker(t, targets, append(base, restate.WithRegistry(), restate.WithHTTPClient(client))...)
	e := newEngine(t, append(base, restate.WithHTTPClient(client))...)
	o := work.NewOwner("creds-" + newToken())
	spec := work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }}
	ref, err := e.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, e, o, ref.ID); st.State != work.StateCompleted || out != "echo x" {
		t.Fatalf("a Work through the protected ingress: %+v %q", st, out)
	}
	if snap, err := e.Snapshot(t.Context()); err != nil || !snap.Deployment {
		t.Fatalf("the deployment view through the protected admin API: %+v, %v", snap, err)
	}
	if ingressRefused.Load() != 0 || ingressRelayed.Load() == 0 || adminRelayed.Load() == 0 {
		t.Fatalf("with the client: ingress %d refused, %d relayed; admin %d relayed", ingressRefused.Load(), ingressRelayed.Load(), adminRelayed.Load())
	}

	plain := newEngine(t, base...)
	refusedBefore := adminRefused.Load()
	if _, err := plain.Start(t.Context(), spec); !errors.Is(err, work.ErrUnavailable) || adminRefused.Load() == refusedBefore {
		t.Fatalf("an Engine without credentials: Start = %v (%d refused by the admin API); want ErrUnavailable", err, adminRefused.Load()-refusedBefore)
	}
	if _, _, err := plain.Result(t.Context(), o, ref.ID, 0); !errors.Is(err, work.ErrUnavailable) || ingressRefused.Load() == 0 {
		t.Fatalf("an Engine without credentials: Result = %v (%d refused by the ingress); want ErrUnavailable", err, ingressRefused.Load())
	}
}

// atRest is one store of Restate's SQL introspection that the at-rest
// scan reads, restricted to a namespace.
type atRest struct{ name, sql string }

func atRestStores(ns string) []atRest {
	like := "'" + ns + ".%'"
	inv := "SELECT id FROM sys_invocation WHERE target_service_name LIKE " + like
	return []atRest{
		{"state", "SELECT * FROM state WHERE service_name LIKE " + like},
		{"sys_journal", "SELECT * FROM sys_journal WHERE id IN (" + inv + ")"},
		{"sys_journal_events", "SELECT * FROM sys_journal_events WHERE id IN (" + inv + ")"},
		{"sys_promise", "SELECT * FROM sys_promise WHERE service_name LIKE " + like},
		{"sys_invocation", "SELECT * FROM sys_invocation WHERE target_service_name LIKE " + like},
	}
}

// deepText is every text in an introspection answer, decoded: JSON in
// strings, byte arrays and base64 strings (payloads, []byte fields) each
// as text and, when they hold JSON, walked in turn.
func deepText(t *testing.T, answer string) (string, int) {
	t.Helper()
	var r struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(answer), &r); err != nil {
		t.Fatalf("an introspection answer: %v: %.300s", err, answer)
	}
	var b strings.Builder
	var walk func(v any, depth int)
	text := func(s string, depth int) {
		b.WriteString(s)
		b.WriteByte('\n')
		if depth > 6 {
			return
		}
		var inner any
		if json.Unmarshal([]byte(s), &inner) == nil {
			if _, isString := inner.(string); !isString {
				walk(inner, depth+1)
			} else {
				b.WriteString(inner.(string))
				b.WriteByte('\n')
			}
		}
		if len(s) >= 8 {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				if d, err := enc.DecodeString(s); err == nil {
					walk(string(d), depth+1)
					break
				}
			}
		}
	}
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			text(x, depth)
		case map[string]any:
			for _, y := range x {
				walk(y, depth)
			}
		case []any:
			raw := make([]byte, 0, len(x))
			for _, y := range x {
				f, ok := y.(float64)
				if !ok || f < 0 || f > 255 || f != float64(int(f)) {
					raw = nil
					break
				}
				raw = append(raw, byte(f))
			}
			if raw != nil {
				text(string(raw), depth)
				return
			}
			for _, y := range x {
				walk(y, depth)
			}
		}
	}
	for _, row := range r.Rows {
		walk(row, 0)
	}
	return b.String(), len(r.Rows)
}

// scanAtRest returns, for each canary, the stores holding it in plaintext
// (as is, in JSON, in bytes or in base64), and how many rows each store
// gave.
func scanAtRest(t *testing.T, admin, ns string, canaries []string) (map[string]map[string]bool, map[string]int) {
	t.Helper()
	found, rows := map[string]map[string]bool{}, map[string]int{}
	for _, st := range atRestStores(ns) {
		text, n := deepText(t, adminQuery(t, admin, st.sql))
		rows[st.name] += n
		for _, c := range canaries {
			if strings.Contains(text, c) {
				if found[c] == nil {
					found[c] = map[string]bool{}
				}
				found[c][st.name] = true
			}
		}
	}
	return found, rows
}

// TestContentAtRest runs, with and without WithContentKeys, Work holding
// each kind of content the runner stores: a completed Work's input and
// output, a running agent's update value and its guidance waiting in its
// mailbox, an external job's handle and output, and the input of a Work
// awaiting its approval. While they wait, and once they all ended, the
// scan of Restate's SQL introspection (state, sys_journal,
// sys_journal_events, sys_promise, sys_invocation of the test's
// namespace) looks for each canary in plaintext, as is, in JSON, in bytes
// and in base64. Sealed: none of them anywhere, and the Engine and the
// children read every one back. Plain: each canary in each store that
// holds it (so the scan can fail).
func TestContentAtRest(t *testing.T) {
	// Where each canary is stored without the keys (the plain run checks
	// each); sys_promise and sys_invocation hold none of the runner's
	// content (its promises carry "approve"/"stop" and true, and no
	// invocation's input or answer is a column there), and
	// sys_journal_events holds none (it records events, not payloads).
	plainWhere := map[string][]string{
		"input":    {"sys_journal"},
		"output":   {"state", "sys_journal"},
		"guidance": {"state"},
		"update":   {"state"},
		"handle":   {"sys_journal"},
		"jobout":   {"state", "sys_journal"},
		"approval": {"state", "sys_journal"},
	}
	t.Run("plain", func(t *testing.T) { contentAtRest(t, nil, plainWhere) })
	t.Run("sealed", func(t *testing.T) { contentAtRest(t, restate.WithContentKeys(contentKey), nil) })
}

func contentAtRest(t *testing.T, keys restate.Option, plainWhere map[string][]string) {
	s := server(t)
	sfx := newToken()
	canary := map[string]string{}
	for _, k := range []string{"input", "output", "guidance", "update", "handle", "jobout", "approval"} {
		canary[k] = "CANARY-AT-REST-" + strings.ToUpper(k) + "-" + sfx
	}
	updateValue := []byte(`{"note":"` + canary["update"] + `"}`)
	reported, release, took := make(chan error, 1), make(chan struct{}), make(chan []string, 1)
	polled, jobDone := make(chan struct{}), make(chan struct{})
	var pollOnce atomic.Bool
	var badInput atomic.Int64
	check := func(in string) {
		if in != canary["input"] && in != canary["approval"] {
			badInput.Add(1)
		}
	}
	targets := map[string]restate.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) {
			check(in)
			return canary["output"], nil
		}},
		"talk": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
			check(in)
			_, err := work.ReportUpdate(ctx, "u1", updateValue, false)
			reported <- err
			if err != nil {
				return "", err
			}
			<-release
			ex, _ := work.ExecutionFrom(ctx)
			took <- boundary.Guidance(ex)
			return "talked", nil
		}},
		"job": {Kind: work.KindFunction, Job: &work.Job{
			Submit: func(_ context.Context, _ string, in string) ([]byte, error) {
				check(in)
				return []byte(canary["handle"]), nil
			},
			Await: func(_ context.Context, h []byte) (work.Poll, error) {
				if string(h) != canary["handle"] {
					return work.Poll{State: work.PollFailed, Class: "bad_handle"}, nil
				}
				if pollOnce.CompareAndSwap(false, true) {
					close(polled)
				}
				select {
				case <-jobDone:
					return work.Poll{State: work.PollDone, Output: canary["jobout"]}, nil
				default:
					return work.Poll{State: work.PollWaiting}, nil
				}
			},
			Backoff: work.Backoff{Initial: 20 * time.Millisecond, Max: 50 * time.Millisecond}}},
	}
	ns, base := trustBase(t, "rest")
	base = append(base, keys)
	startWorker(t, targets, append(base, restate.WithRegistry())...)
	e := newEngine(t, base...)
	ctx := t.Context()
	o := work.NewOwner("rest-" + sfx)
	start := func(label string, kind observe.Kind, input string, f func(*work.Spec)) work.Ref {
		spec := work.Spec{Owner: o, Target: work.Target{Label: label, Kind: kind}, Input: input,
			Run: func(context.Context) (string, error) { return "", nil }}
		if f != nil {
			f(&spec)
		}
		ref, err := e.Start(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	echo := start("echo", work.KindFunction, canary["input"], nil)
	if st, out := settle(t, e, o, echo.ID); st.State != work.StateCompleted || out != canary["output"] {
		t.Fatalf("echo: %+v %q", st, out)
	}
	talk := start("talk", work.KindAgent, canary["input"], func(s *work.Spec) { s.Updates = &work.UpdatePolicy{} })
	if err := within(t, reported, "the update's report"); err != nil {
		t.Fatalf("ReportUpdate: %v", err)
	}
	if _, err := e.Send(ctx, o, talk.ID, "cmd-1", canary["guidance"]); err != nil {
		t.Fatal(err)
	}
	job := start("job", work.KindFunction, canary["input"], func(s *work.Spec) { s.Job = targets["job"].Job })
	within(t, polled, "the job's first poll")
	ap := start("echo", work.KindFunction, canary["approval"], func(s *work.Spec) { s.NeedsApproval = true })
	// The Engine reads the content back: the approval's input, the update.
	pending, err := e.Pending(ctx, o)
	if err != nil || len(pending) != 1 || pending[0].Input != canary["approval"] {
		t.Fatalf("Pending = %+v, %v; want the approval's input", pending, err)
	}
	if us, err := e.Updates(ctx, o, talk.ID, 0); err != nil || len(us) != 1 || string(us[0].Value) != string(updateValue) {
		t.Fatalf("Updates = %+v, %v", us, err)
	}

	names := make([]string, 0, len(canary))
	for k := range canary {
		names = append(names, k)
	}
	sort.Strings(names)
	values := make([]string, len(names))
	for i, k := range names {
		values[i] = canary[k]
	}
	live, rows := scanAtRest(t, s.Admin, ns, values)

	// Every Work ends; the children and the Engine read the rest.
	close(release)
	close(jobDone)
	if g := within(t, took, "the child's guidance"); len(g) != 1 || g[0] != canary["guidance"] {
		t.Fatalf("the child took %q; want the guidance", g)
	}
	if st, _ := settle(t, e, o, talk.ID); st.State != work.StateCompleted {
		t.Fatalf("talk: %+v", st)
	}
	if st, out := settle(t, e, o, job.ID); st.State != work.StateCompleted || out != canary["jobout"] {
		t.Fatalf("job: %+v %q", st, out)
	}
	if err := e.Approve(ctx, o, ap.ID); err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, e, o, ap.ID); st.State != work.StateCompleted || out != canary["output"] {
		t.Fatalf("approved: %+v %q", st, out)
	}
	if n := badInput.Load(); n != 0 {
		t.Fatalf("children got %d inputs that are not theirs", n)
	}
	ended, rows2 := scanAtRest(t, s.Admin, ns, values)
	for st, n := range rows2 {
		rows[st] += n
	}
	t.Logf("rows scanned by store: %v", rows)
	where := map[string]map[string]bool{}
	for i, k := range names {
		where[k] = map[string]bool{}
		for st := range live[values[i]] {
			where[k][st] = true
		}
		for st := range ended[values[i]] {
			where[k][st] = true
		}
	}
	t.Logf("stores holding each canary in plaintext: %v", where)
	if rows["state"] == 0 || rows["sys_journal"] == 0 || rows["sys_invocation"] == 0 {
		t.Fatalf("the scan read nothing: %v", rows)
	}
	if plainWhere == nil {
		for k, at := range where {
			if len(at) > 0 {
				t.Errorf("sealed: the %s canary is stored in plaintext in %v", k, at)
			}
		}
		return
	}
	for k, stores := range plainWhere {
		for _, st := range stores {
			if !where[k][st] {
				t.Errorf("plain: the scan did not find the %s canary in %s (found in %v)", k, st, where[k])
			}
		}
	}
}

// within receives from ch within a minute, else fails the test.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: not within a minute", what)
		panic("unreachable")
	}
}

func newContentKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestContentKeyRotation: a Work's output written under key A stays
// readable after the deployment rotates to B (B current, A older: both
// the Worker and the Engine); Work written then is sealed under B (an
// Engine holding A only cannot read it); once A is dropped, A's output is
// a clear error (ErrUndecryptable inside work.ErrUnavailable), never an
// empty value or the envelope, and B's output is still read. An Engine
// with no keys cannot read sealed output either.
func TestContentKeyRotation(t *testing.T) {
	_, base := trustBase(t, "rotate")
	a, b := newContentKey(t), newContentKey(t)
	targets := map[string]restate.Child{"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) {
		return "out of " + in, nil
	}}}
	with := func(opts ...restate.Option) []restate.Option {
		return append(append([]restate.Option(nil), base...), opts...)
	}
	o := work.NewOwner("rotate-" + newToken())
	run := func(e *work.Engine, input string) string {
		ref, err := e.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: input,
			Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		if st, out := settle(t, e, o, ref.ID); st.State != work.StateCompleted || out != "out of "+input {
			t.Fatalf("%s: %+v %q", input, st, out)
		}
		return ref.ID
	}
	read := func(e *work.Engine, id string) (string, error) {
		_, out, err := e.Result(t.Context(), o, id, 0)
		return out, err
	}
	unreadable := func(what string, e *work.Engine, id string) {
		t.Helper()
		out, err := read(e, id)
		if !errors.Is(err, restate.ErrUndecryptable) || !errors.Is(err, work.ErrUnavailable) || out != "" {
			t.Errorf("%s: %q, %v; want ErrUndecryptable (in ErrUnavailable) and no output", what, out, err)
		}
	}

	// Under A.
	wA := startWorker(t, targets, with(restate.WithRegistry(), restate.WithContentKeys(a))...)
	underA := run(newEngine(t, with(restate.WithContentKeys(a))...), "A")
	wA.Stop()

	// Rotated: B current, A older.
	startWorker(t, targets, with(restate.WithRegistry(), restate.WithContentKeys(b, a))...)
	rotated := newEngine(t, with(restate.WithContentKeys(b, a))...)
	if out, err := read(rotated, underA); err != nil || out != "out of A" {
		t.Fatalf("A's output after the rotation: %q, %v", out, err)
	}
	underB := run(rotated, "B")
	unreadable("B's output with A only", newEngine(t, with(restate.WithContentKeys(a))...), underB)

	// A dropped.
	onlyB := newEngine(t, with(restate.WithContentKeys(b))...)
	if out, err := read(onlyB, underB); err != nil || out != "out of B" {
		t.Fatalf("B's output with B only: %q, %v", out, err)
	}
	unreadable("A's output once A is dropped", onlyB, underA)
	unreadable("B's output with no keys", newEngine(t, base...), underB)
}

// TestWorkerWithoutContentKey: a Worker that cannot open a Work's input
// (no keys, or another key) does not run its child with it: the Work
// fails with class content_key.
func TestWorkerWithoutContentKey(t *testing.T) {
	for name, workerKeys := range map[string]restate.Option{"no keys": nil, "another key": restate.WithContentKeys(newContentKey(t))} {
		t.Run(name, func(t *testing.T) {
			_, base := trustBase(t, "nokey")
			var ran atomic.Int64
			startWorker(t, map[string]restate.Child{"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) {
				ran.Add(1)
				return in, nil
			}}}, append(base, restate.WithRegistry(), workerKeys)...)
			e := newEngine(t, append(base, restate.WithContentKeys(newContentKey(t)))...)
			o := work.NewOwner("nokey-" + newToken())
			ref, err := e.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "secret",
				Run: func(context.Context) (string, error) { return "", nil }})
			if err != nil {
				t.Fatal(err)
			}
			if st, out := settle(t, e, o, ref.ID); st.State != work.StateFailed || st.Class != "content_key" || out != "" || ran.Load() != 0 {
				t.Fatalf("%+v %q, the child ran %d times; want failed, content_key, not run", st, out, ran.Load())
			}
		})
	}
}

// TestSealedMailboxBytes: with content sealed, a Work's mailbox counts
// the guidance's plaintext bytes, as without: four messages of the
// largest size fill the default 64 KiB exactly, the next is refused
// (mailbox_full), and the child takes the four intact.
func TestSealedMailboxBytes(t *testing.T) {
	_, base := trustBase(t, "mailbox")
	base = append(base, restate.WithContentKeys(contentKey))
	release, took := make(chan struct{}), make(chan []string, 1)
	started := make(chan struct{})
	startWorker(t, map[string]restate.Child{"agent": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
		close(started)
		<-release
		ex, _ := work.ExecutionFrom(ctx)
		took <- boundary.Guidance(ex)
		return "done", nil
	}}}, append(base, restate.WithRegistry())...)
	e := newEngine(t, base...)
	o := work.NewOwner("mailbox-" + newToken())
	ref, err := e.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "agent", Kind: work.KindAgent}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	lim, err := driver.ResolveLimits() // the defaults
	if err != nil {
		t.Fatal(err)
	}
	n := lim.MaxQueuedGuidanceBytes / lim.MaxMessageBytes
	var sent []string
	for i := range n {
		msg := strings.Repeat(strconv.Itoa(i), lim.MaxMessageBytes)
		if _, err := e.Send(t.Context(), o, ref.ID, "c"+strconv.Itoa(i), msg); err != nil {
			close(release)
			t.Fatalf("send %d of %d bytes: %v", i, len(msg), err)
		}
		sent = append(sent, msg)
	}
	if _, err := e.Send(t.Context(), o, ref.ID, "", "y"); !errors.Is(err, work.ErrMailboxFull) {
		close(release)
		t.Fatalf("a send past %d bytes: %v; want mailbox_full", lim.MaxQueuedGuidanceBytes, err)
	}
	close(release)
	if g := <-took; len(g) != n || strings.Join(g, "|") != strings.Join(sent, "|") {
		t.Fatalf("the child took %d messages; want the %d sent, intact", len(g), n)
	}
	if st, _ := settle(t, e, o, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("%+v", st)
	}
}
