package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// Child is a target of a driver's worker processes, as both runners'
// Child types have it (Kind and Run).
type Child struct {
	Kind observe.Kind
	Run  func(ctx context.Context, input string) (string, error)
}

// Canaries are the content a driver checks for in every process's logs and
// spans and in the server's storage: each runner's own, so that one
// runner's test never finds the other's.
type Canaries struct {
	Input, Output, Failure string
}

// Digest is how a slow child reports the guidance it took: a digest, so
// that the driver can check the text arrived without printing it.
func Digest(msgs []string) string {
	h := sha256.Sum256([]byte(strings.Join(msgs, "\x00")))
	return hex.EncodeToString(h[:8])
}

// Children are the targets both drivers run, in the process name; each
// attempt prints "started <work id> <name>" on stdout as it begins (the
// driver's cue). slow and deaf are agents, the rest functions:
//
//   - slow, input "N ...": returns after N guidance messages (0: runs until
//     cancelled), a model boundary every 50 ms; its output names the
//     digest of what it took (and c.Output when the input holds c.Input);
//   - retry, input a directory the processes share: its first attempt of a
//     Work marks it and runs until killed, a later attempt returns at once;
//   - gated, input a file path (and words after it): returns once the file
//     exists, with c.Output;
//   - deaf: as gated, an agent that takes no guidance;
//   - stubborn: as gated, ignoring its cancellation until then;
//   - fail: fails with c.Failure;
//   - asker, input "N ...": reports N updates (keys u1...uN), then asks a
//     question and waits for its answer, and returns the answer's digest
//     (the Work's Spec must declare updates).
func Children(name string, c Canaries, log *slog.Logger) map[string]Child {
	started := func(ctx context.Context, label string) {
		ex, _ := work.ExecutionFrom(ctx)
		fmt.Printf("started %s %s\n", ex.WorkID(), name)
		log.Info("attempt started", "work", ex.WorkID(), "target", label)
	}
	poll := func(ctx context.Context, done func() bool) error {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for !done() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		return nil
	}
	exists := func(input string) func() bool {
		path := strings.Fields(input + " ")[0]
		return func() bool { _, err := os.Stat(path); return err == nil }
	}
	return map[string]Child{
		"slow": {Kind: work.KindAgent, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "slow")
			want, _ := strconv.Atoi(strings.Fields(input + " 0")[0])
			ex, _ := work.ExecutionFrom(ctx)
			var got []string
			err := poll(ctx, func() bool {
				got = append(got, boundary.Guidance(ex)...)
				return want > 0 && len(got) >= want
			})
			if err != nil {
				log.Info("attempt cancelled", "work", ex.WorkID())
				return "", err
			}
			log.Info("guidance taken", "work", ex.WorkID(), "messages", len(got))
			out := "took guidance " + Digest(got) + " on " + name
			if strings.Contains(input, c.Input) {
				out += " " + c.Output
			}
			return out, nil
		}},
		"retry": {Kind: work.KindFunction, Run: func(ctx context.Context, dir string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			// Marked before it says it started: a kill after "started"
			// always leaves the mark for the next attempt.
			f, err := os.OpenFile(dir+"/"+ex.WorkID(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			started(ctx, "retry")
			if err == nil {
				_ = f.Close()
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "second attempt on " + name, nil
		}},
		"gated": {Kind: work.KindFunction, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "gated")
			if err := poll(ctx, exists(input)); err != nil {
				return "", err
			}
			return "gated on " + name + " " + c.Output, nil
		}},
		"deaf": {Kind: work.KindAgent, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "deaf")
			if err := poll(ctx, exists(input)); err != nil {
				return "", err
			}
			return "deaf on " + name, nil
		}},
		"stubborn": {Kind: work.KindFunction, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "stubborn")
			if err := poll(context.WithoutCancel(ctx), exists(input)); err != nil {
				return "", err
			}
			return "stubborn on " + name, nil
		}},
		"fail": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			started(ctx, "fail")
			return "", errors.New(c.Failure)
		}},
		"asker": {Kind: work.KindFunction, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "asker")
			n, _ := strconv.Atoi(strings.Fields(input + " 0")[0])
			for i := 1; i <= n; i++ {
				key := "u" + strconv.Itoa(i)
				if _, err := work.ReportUpdate(ctx, key, []byte(strconv.Quote(key)), false); err != nil {
					return "", err
				}
			}
			if _, err := work.ReportUpdate(ctx, "q", []byte(`"go on?"`), true); err != nil {
				return "", err
			}
			answer, err := work.AwaitAnswer(ctx)
			if err != nil {
				return "", err
			}
			return "answered " + Digest(answer) + " on " + name, nil
		}},
	}
}
