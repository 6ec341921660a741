package middleware

import (
	"errors"
	"runtime"
	"sync"
	"weak"

	"github.com/agentwork/agentwork/work"
)

// ErrOwnerInUse: another live coordinator (a langchaingo Kit, an Eino
// Middleware) holds the same owner id on the same engine instance
// (ClaimOwner).
var ErrOwnerInUse = errors.New("middleware: another live coordinator has this owner on this engine")

// OwnerClaim is one live coordinator's hold on its owner id on one engine
// instance (ClaimOwner). Its Release frees the id. The zero and nil
// OwnerClaim hold nothing.
type OwnerClaim struct {
	key     ownerKey
	cleanup runtime.Cleanup // deletes the entry when the engine is collected
}

// ClaimOwner claims owner id id on sup for one live coordinator: an
// adapter calls it for an owner id the application named (WithOwner), so
// that two live coordinators of one id on one engine instance, which would
// see, cancel and release each other's Work, cannot exist. It returns
// ErrOwnerInUse while another claim of id on sup is held, and nil, nil
// for a nil engine (there is nothing to claim on).
//
// The registry keeps a small token per live id, never the coordinator: a
// coordinator dropped without releasing its claim is collected, but its id
// stays taken on that engine until the engine goes too (the engine is
// held weakly and its ids are forgotten when it is collected). A new
// process has a new engine instance, so a restarted coordinator claims
// its id again and sees the Work the old process started on a durable
// engine. It is safe for concurrent use: of concurrent claims of one id
// on one engine, one wins.
func ClaimOwner(sup *work.Engine, id string) (*OwnerClaim, error) {
	if sup == nil {
		return nil, nil
	}
	key := ownerKey{engine: weak.Make(sup), id: id}
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	if _, taken := liveOwners.m[key]; taken {
		return nil, ErrOwnerInUse
	}
	if liveOwners.m == nil {
		liveOwners.m = make(map[ownerKey]*OwnerClaim)
	}
	c := &OwnerClaim{key: key}
	c.cleanup = runtime.AddCleanup(sup, forgetOwner, key)
	liveOwners.m[key] = c
	return c, nil
}

// Release frees the claimed id for another coordinator. A second Release,
// or one of a nil claim, does nothing.
func (c *OwnerClaim) Release() {
	if c == nil {
		return
	}
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	if liveOwners.m[c.key] == c {
		delete(liveOwners.m, c.key)
		c.cleanup.Stop()
	}
}

// ownerKey names an owner id in one engine instance: a weak pointer to
// the engine (the registry does not keep it alive; weak pointers made
// from one pointer are equal, even after it is collected, and never equal
// one made from another object).
type ownerKey struct {
	engine weak.Pointer[work.Engine]
	id     string
}

// liveOwners is the registry of the claimed owner ids of live
// coordinators, per engine instance: an entry is added by ClaimOwner and
// removed by its claim's Release (or when the engine is collected), so it
// holds nothing for released claims.
var liveOwners struct {
	mu sync.Mutex
	m  map[ownerKey]*OwnerClaim
}

// forgetOwner deletes key's entry: its engine was collected, so no
// coordinator can claim key again (a weak pointer to it cannot be made
// anew).
func forgetOwner(key ownerKey) {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	delete(liveOwners.m, key)
}
