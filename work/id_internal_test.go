package work

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work/internal/contract"
)

// TestEncodeID: encodeID writes what hex.Encode writes, and a scope id is
// its owner, a slash and an id (which item.id reads back).
func TestEncodeID(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 2000 {
		var b [16]byte
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if n < 256 {
			b[n%16] = byte(n) // every byte value, in every position
		}
		var got [idLen]byte
		encodeID(&got, &b)
		if want := hex.EncodeToString(b[:]); string(got[:]) != want {
			t.Fatalf("encodeID(%x) = %q", b, got)
		}
	}
	s := New()
	defer s.Close(t.Context())
	s.mu.Lock()
	scope := s.scopeIDLocked(newScopeBuf("owner"))
	s.mu.Unlock()
	id, ok := strings.CutPrefix(scope, "owner/")
	if !ok || !contract.IsID(id) || (&item{scopeID: scope}).id() != id {
		t.Fatalf("scope id %q", scope)
	}
}
