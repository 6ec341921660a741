package restate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// ingress calls the runner's handlers through Restate's HTTP ingress.
// Handlers answer refusals in their replies, never as an error whose text
// the ingress would carry: an error here is the call's (transport, or
// Restate's own answer). Each try of a call, its reply read included, is
// bounded by the RPC timeout (the http.Client's Timeout): callers bound
// nothing themselves, and fromIngress tells a service that did not answer
// in time (work.ErrUnavailable) from the caller's own end.
type ingress struct {
	base string
	hc   *http.Client
	ns   string
}

// newIngress returns a client of the API at base whose calls are capped
// at timeout, made with a copy of from (WithHTTPClient; nil: a plain
// client) whose Timeout is at most timeout.
func newIngress(base, ns string, timeout time.Duration, from *http.Client) *ingress {
	hc := &http.Client{Timeout: timeout}
	if from != nil {
		c := *from
		if c.Timeout <= 0 || c.Timeout > timeout {
			c.Timeout = timeout
		}
		hc = &c
	}
	return &ingress{base: strings.TrimRight(base, "/"), ns: ns, hc: hc}
}

// errStatus is a call Restate answered with an error status.
type errStatus struct {
	Status int
	Code   string // the body's code, when it has one
}

func (e *errStatus) Error() string {
	return fmt.Sprintf("restate: ingress answered %d %s", e.Status, e.Code)
}

// object calls handler of the Virtual Object service (namespaced) with key,
// decoding the reply into out (nil: none). key is escaped; idem, when set,
// is the call's idempotency key (a repeated call gets the first answer).
func (c *ingress) object(ctx context.Context, service, key, handler, idem string, in, out any) error {
	return c.call(ctx, c.ns+"."+service+"/"+url.PathEscape(key)+"/"+handler, idem, in, out)
}

func (c *ingress) call(ctx context.Context, path, idem string, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = b
	}
	// An idempotent call is tried again while it is cut off: the key
	// makes a repeat return the first attempt's answer.
	for try := 1; ; try++ {
		err := c.once(ctx, path, idem, body, out)
		var st *errStatus
		if err == nil || idem == "" || errors.As(err, &st) && st.Status < 500 || errors.Is(err, errReplyTooLarge) || ctx.Err() != nil || try == 5 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(try) * 50 * time.Millisecond):
		}
	}
}

func (c *ingress) once(ctx context.Context, path, idem string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json") // the admin API's query answers JSON only when asked
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeReply(resp.StatusCode, resp.Body, maxReplyBytes, out)
}

// fromIngress maps a call's error to the engine's: the caller's context
// as is, anything else work.ErrUnavailable (its cause reachable).
func fromIngress(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ctx.Err()
	}
	return driver.Wrap(work.ErrUnavailable, err)
}

func workName(ns, label string) string { return ns + "." + workService + "." + label }

// decodeErr is a reply's refusal as the engine's error (nil for none).
func decodeErr(code, msg string) error {
	if code == "" {
		return nil
	}
	if e, ok := driver.DecodeError(code, msg); ok {
		return e
	}
	return driver.Detail(work.ErrUnavailable, "an unknown refusal")
}
