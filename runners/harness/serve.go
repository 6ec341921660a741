package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentwork/agentwork/work"
)

// Serve is a coordinator process's side of the protocol: it prints ready
// to out, then answers each line of in with command's answer (the line's
// first four words), and returns the process's exit code once in ends (1
// when out fails). A failed command answers its work.Error code and text;
// the log gets the command's name and the code only.
func Serve(in io.Reader, out io.Writer, log *slog.Logger, command func(f []string) (any, error)) int {
	enc := json.NewEncoder(out)
	if _, err := fmt.Fprintln(out, `{"ready":true}`); err != nil {
		return 1
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		reply, err := command(f)
		if err != nil {
			var we *work.Error
			code := "error"
			if errors.As(err, &we) {
				code = we.Code
			}
			log.Info("command failed", "command", f[0], "code", code)
			// The answer names the error; the log only its code.
			reply = map[string]string{"error": code, "detail": err.Error()}
		} else {
			log.Info("command", "command", f[0])
		}
		if err := enc.Encode(reply); err != nil {
			return 1
		}
	}
	return 0
}

// Arg is f[i], or "" past its end.
func Arg(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// TracerProvider is a process's tracer provider: its ended spans written
// to path, synchronously (a SIGKILLed process loses none it ended), one
// line each; path "" keeps none.
func TracerProvider(path string) (*sdktrace.TracerProvider, error) {
	if path == "" {
		return sdktrace.NewTracerProvider(), nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSyncer(&spanFile{f: f})), nil
}

type spanFile struct {
	mu sync.Mutex
	f  *os.File
}

func (s *spanFile) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range spans {
		var b strings.Builder
		b.WriteString(sp.Name())
		for _, a := range sp.Attributes() {
			fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.String())
		}
		for _, e := range sp.Events() {
			fmt.Fprintf(&b, " event:%s", e.Name)
			for _, a := range e.Attributes {
				fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.String())
			}
		}
		fmt.Fprintf(&b, " status=%s %s\n", sp.Status().Code, sp.Status().Description)
		if _, err := s.f.WriteString(b.String()); err != nil {
			return err
		}
	}
	return nil
}

func (s *spanFile) Shutdown(context.Context) error { return s.f.Close() }
