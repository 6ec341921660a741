package main

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

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// The targets' canaries: content that may reach the Work's own journal and
// state in Restate (its input and result), guidance only until the child
// took it, and nothing else.
const (
	CanaryInput    = "CANARY-INPUT-7c3a"
	CanaryOutput   = "CANARY-OUTPUT-7c3a"
	CanaryFailure  = "CANARY-FAILURE-7c3a"
	CanaryGuidance = "CANARY-GUIDANCE-7c3a"
)

// Digest is how a slow child reports the guidance it took: a digest, so
// that the test can check the text arrived without printing it.
func Digest(msgs []string) string {
	h := sha256.Sum256([]byte(strings.Join(msgs, "\x00")))
	return hex.EncodeToString(h[:8])
}

// targets are a service process's children (slow and deaf are agents); name is the process's.
func targets(name string, log *slog.Logger) map[string]restate.Child {
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
	exists := func(path string) func() bool {
		return func() bool { _, err := os.Stat(path); return err == nil }
	}
	return map[string]restate.Child{
		// slow: input "N ...": returns after N guidance messages (0: runs
		// until cancelled), a model boundary every 50 ms.
		"slow": {Kind: work.KindAgent, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "slow")
			want, _ := strconv.Atoi(strings.Fields(input + " 0")[0])
			ex, _ := work.ExecutionFrom(ctx)
			var got []string
			err := poll(ctx, func() bool {
				got = append(got, ex.Guidance()...)
				return want > 0 && len(got) >= want
			})
			if err != nil {
				log.Info("attempt cancelled", "work", ex.WorkID())
				return "", err
			}
			log.Info("guidance taken", "work", ex.WorkID(), "messages", len(got))
			out := "took guidance " + Digest(got) + " on " + name
			if strings.Contains(input, CanaryInput) {
				out += " " + CanaryOutput
			}
			return out, nil
		}},
		// retry: input a directory shared by the service processes. The
		// first attempt of a Work marks it and runs until killed; a later
		// attempt returns at once.
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
		// gated: input a file path (and words after it); returns once
		// the file exists.
		"gated": {Kind: work.KindFunction, Run: func(ctx context.Context, input string) (string, error) {
			started(ctx, "gated")
			if err := poll(ctx, exists(strings.Fields(input + " ")[0])); err != nil {
				return "", err
			}
			return "gated on " + name + " " + CanaryOutput, nil
		}},
		// deaf: an agent child that takes no guidance: input a file path;
		// returns once the file exists.
		"deaf": {Kind: work.KindAgent, Run: func(ctx context.Context, path string) (string, error) {
			started(ctx, "deaf")
			if err := poll(ctx, exists(path)); err != nil {
				return "", err
			}
			return "deaf on " + name, nil
		}},
		// fail: fails with canary failure text.
		"fail": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			started(ctx, "fail")
			return "", errors.New(CanaryFailure)
		}},
	}
}
