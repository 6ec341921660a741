package restate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// recorder is a reverse proxy to Restate's ingress that keeps the bodies
// of the answers it relays: what an Engine behind it has read.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) proxy(t *testing.T, ingress string) string {
	t.Helper()
	u, err := url.Parse(ingress)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = tr
	p.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return nil
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return srv.URL
}

// read reports how many answers were relayed and whether one held any
// of needles.
func (r *recorder) read(needles ...[]byte) (n int, found bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		for _, x := range needles {
			if bytes.Contains(b, x) {
				found = true
			}
		}
	}
	return len(r.bodies), found
}

// Update notices are content-free, and so is what the Engine reads to
// make them: a Subscription reads each update's sequence number, size and
// time from the Work's control object, never its value (which stays in
// Restate until Updates is called).
func TestUpdateNoticesReadNoValues(t *testing.T) {
	s := server(t)
	ns := "notice" + strconv.FormatInt(namespaces.Add(1), 10)
	value := []byte(`{"canary":"update-b0a7-` + strconv.FormatInt(time.Now().UnixNano(), 36) + `"}`)
	talker := restate.Child{Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
		if _, err := work.ReportUpdate(ctx, "k1", value, false); err != nil {
			return "", err
		}
		return "done", nil
	}}
	deploy(t, map[string]restate.Child{"talker": talker}, restate.WithServicePrefix(ns))
	rec := &recorder{}
	e := restate.New(restate.WithServicePrefix(ns), restate.WithIngress(rec.proxy(t, s.Ingress)), restate.WithAdmin(s.Admin),
		restate.WithRPCTimeout(time.Minute))
	defer e.Close(context.Background())
	ctx := t.Context()
	o := work.NewOwner(fmt.Sprintf("notice-%d", time.Now().UnixNano()))
	sub, err := e.Subscribe(ctx, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "talker", Kind: work.KindFunction}, Input: "x",
		Updates: &work.UpdatePolicy{}, Run: func(context.Context) (string, error) { return "done", nil }})
	if err != nil {
		t.Fatal(err)
	}
	var update *work.Notice
	for settled := false; !settled; {
		select {
		case n := <-sub.C():
			switch {
			case n.WorkID != ref.ID:
				t.Fatalf("notice of another Work: %+v", n)
			case n.Kind == work.NoticeUpdate:
				update = &n
			case n.State.Terminal():
				settled = true
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no settlement notice within 60s")
		}
	}
	if update == nil || update.Seq != 1 || update.Bytes != len(value) {
		t.Fatalf("update notice = %+v, want Seq 1, Bytes %d", update, len(value))
	}
	n, found := rec.read(value, []byte(base64.StdEncoding.EncodeToString(value)))
	if n == 0 {
		t.Fatal("the recorder relayed no answer: the Engine did not read through it")
	}
	if found {
		t.Fatal("the Engine read an update's value to make its notice")
	}
}
