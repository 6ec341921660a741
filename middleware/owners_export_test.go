package middleware

import (
	"weak"

	"github.com/agentwork/agentwork/work"
)

// LiveOwnersForTest returns how many owner ids the live-owner registry holds.
func LiveOwnersForTest() int {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	return len(liveOwners.m)
}

// OwnerLiveForTest reports whether the live-owner registry holds id on sup.
func OwnerLiveForTest(sup *work.Engine, id string) bool {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	_, ok := liveOwners.m[ownerKey{engine: weak.Make(sup), id: id}]
	return ok
}

// EngineKeyForTest is sup's registry key (a weak pointer).
func EngineKeyForTest(sup *work.Engine) any { return weak.Make(sup) }

// OwnerKeyLiveForTest reports whether the registry holds id under key.
func OwnerKeyLiveForTest(key any, id string) bool {
	liveOwners.mu.Lock()
	defer liveOwners.mu.Unlock()
	_, ok := liveOwners.m[ownerKey{engine: key.(weak.Pointer[work.Engine]), id: id}]
	return ok
}
