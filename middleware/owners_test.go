package middleware_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// TestClaimOwner: one claim per owner id per engine instance; the id is
// free again after Release, on another engine and for another id; a
// stale Release leaves a newer claim alone.
func TestClaimOwner(t *testing.T) {
	sup, other := work.New(), work.New()
	defer sup.Close(context.Background())
	defer other.Close(context.Background())
	first, err := middleware.ClaimOwner(sup, "coord")
	if err != nil || first == nil {
		t.Fatalf("ClaimOwner = %v, %v", first, err)
	}
	for _, tc := range []struct {
		name   string
		engine *work.Engine
		id     string
		want   error
	}{
		{"same engine, same id", sup, "coord", middleware.ErrOwnerInUse},
		{"same engine, other id", sup, "coord-2", nil},
		{"other engine, same id", other, "coord", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := middleware.ClaimOwner(tc.engine, tc.id)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("ClaimOwner: err = %v, want %v", err, tc.want)
			}
			c.Release()
		})
	}
	first.Release()
	again, err := middleware.ClaimOwner(sup, "coord")
	if err != nil {
		t.Fatalf("ClaimOwner after Release: %v", err)
	}
	first.Release() // stale
	if _, err := middleware.ClaimOwner(sup, "coord"); !errors.Is(err, middleware.ErrOwnerInUse) {
		t.Fatalf("ClaimOwner after a stale Release: err = %v, want ErrOwnerInUse", err)
	}
	again.Release()
	var none *middleware.OwnerClaim
	none.Release()
	if c, err := middleware.ClaimOwner(nil, "coord"); c != nil || err != nil {
		t.Fatalf("ClaimOwner of a nil engine = %v, %v; want nil, nil (nothing to claim on)", c, err)
	}
	if n := middleware.LiveOwnersForTest(); n != 0 {
		t.Fatalf("the registry holds %d ids after every Release, want 0", n)
	}
}

// TestClaimOwnerConcurrent: of many concurrent claims of one id, one wins.
func TestClaimOwnerConcurrent(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	const n = 16
	var wg sync.WaitGroup
	claims := make(chan *middleware.OwnerClaim, n)
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			c, err := middleware.ClaimOwner(sup, "coord")
			if err != nil {
				errs <- err
				return
			}
			claims <- c
		})
	}
	wg.Wait()
	close(claims)
	close(errs)
	if len(claims) != 1 {
		t.Fatalf("%d claims won, want 1", len(claims))
	}
	for err := range errs {
		if !errors.Is(err, middleware.ErrOwnerInUse) {
			t.Fatalf("err = %v, want ErrOwnerInUse", err)
		}
	}
	for c := range claims {
		c.Release()
	}
	if n := middleware.LiveOwnersForTest(); n != 0 {
		t.Fatalf("the registry holds %d ids after Release, want 0", n)
	}
}

// The registry does not keep a *work.Engine alive: an unreleased
// claim's id leaves the registry when its engine is collected.
func TestClaimOwnerHoldsNoEngine(t *testing.T) {
	supGone := make(chan struct{})
	var ek any
	func() {
		sup := work.New()
		if _, err := middleware.ClaimOwner(sup, "weakly-held"); err != nil {
			t.Fatal(err)
		}
		if !middleware.OwnerLiveForTest(sup, "weakly-held") {
			t.Fatal("the registry does not hold the claimed id")
		}
		runtime.AddCleanup(sup, func(ch chan struct{}) { close(ch) }, supGone)
		ek = middleware.EngineKeyForTest(sup)
	}()
	deadline := time.After(10 * time.Second)
wait:
	for {
		runtime.GC()
		select {
		case <-supGone:
			break wait
		case <-deadline:
			t.Fatal("the engine was not collected")
		case <-time.After(10 * time.Millisecond): // the collector runs at its own pace
		}
	}
	stop := time.Now().Add(10 * time.Second)
	for middleware.OwnerKeyLiveForTest(ek, "weakly-held") {
		if time.Now().After(stop) {
			t.Fatal("the collected engine's owner id stays in the registry")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on the collector's goroutine, with no signal
	}
}
