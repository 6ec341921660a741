package langchaingo

import (
	"runtime"
	"sync"
	"weak"

	"github.com/agentwork/agentwork/work"
)

// ownerKey names an owner id in one engine instance. engine is a weak
// pointer for a *work.Supervisor (the registry does not keep it alive),
// else the engine value itself.
type ownerKey struct {
	engine any
	id     string
}

// engineKey is the registry's key for sup: a weak pointer for a
// *work.Supervisor (weak pointers made from one pointer are equal, even
// after it is collected, and never equal one made from another object),
// else sup itself, whose dynamic type must be comparable.
func engineKey(sup work.Engine) any {
	if s, ok := sup.(*work.Supervisor); ok {
		return weak.Make(s)
	}
	return sup
}

// ownerClaim is a live Kit's entry in the registry: a token, not the Kit,
// so an unreleased Kit that is dropped is collected with its Set.
type ownerClaim struct {
	key     ownerKey
	cleanup runtime.Cleanup // deletes the entry when a *work.Supervisor is collected
	hasCln  bool
}

// liveOwners is the registry of the WithOwner ids of live Kits, per engine
// instance: an entry is added by Prepare and removed by its Kit's Release
// (or, for a *work.Supervisor, when the Supervisor is collected), so it
// holds nothing for released Kits. It holds a claim token, never a Kit;
// for an engine other than a *work.Supervisor its key holds the engine
// until that Release.
var liveOwners struct {
	mu sync.Mutex
	m  map[ownerKey]*ownerClaim
}

// claimOwner registers a claim of id on sup, or reports nil when another
// live Kit has it.
func claimOwner(sup work.Engine, id string) *ownerClaim {
	key := ownerKey{engine: engineKey(sup), id: id}
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	if _, taken := liveOwners.m[key]; taken {
		return nil
	}
	if liveOwners.m == nil {
		liveOwners.m = make(map[ownerKey]*ownerClaim)
	}
	c := &ownerClaim{key: key}
	if s, ok := sup.(*work.Supervisor); ok {
		c.cleanup, c.hasCln = runtime.AddCleanup(s, forgetOwner, key), true
	}
	liveOwners.m[key] = c
	return c
}

// forgetOwner deletes key's entry: its Supervisor was collected, so no
// Kit can claim key again (a weak pointer to it cannot be made anew).
func forgetOwner(key ownerKey) {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	delete(liveOwners.m, key)
}

// releaseOwner removes c's entry when it is still c's.
func releaseOwner(c *ownerClaim) {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	if liveOwners.m[c.key] == c {
		delete(liveOwners.m, c.key)
		if c.hasCln {
			c.cleanup.Stop()
		}
	}
}
