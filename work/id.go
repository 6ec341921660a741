package work

import (
	"crypto/rand"
	"encoding/hex"
	mrand "math/rand/v2"
	"sync"
	"unsafe"
)

// idSources are ChaCha8 generators (cryptographically strong), each seeded
// from crypto/rand, that make the 128-bit random ids: reading crypto/rand
// itself asks the kernel every time, several hundred nanoseconds a Start.
var idSources = sync.Pool{New: func() any { return newIDSource() }}

// randomID fills b with random bytes.
func randomID(b *[16]byte) {
	g := idSources.Get().(*mrand.ChaCha8)
	_, _ = g.Read(b[:]) // never returns an error
	idSources.Put(g)
}

func newID() string {
	var b [16]byte
	randomID(&b)
	return hex.EncodeToString(b[:])
}

// idLen is the length of a Work id: 128 bits in hex.
const idLen = 32

// A Work's scope id is its owner's id + "/" + its id; the id is its last
// idLen bytes (item.id), so one allocation holds both.

// newScopeBuf returns owner + "/" and room for an id, for scopeID.
func newScopeBuf(owner string) []byte {
	buf := make([]byte, len(owner)+1+idLen)
	copy(buf, owner)
	buf[len(owner)] = '/'
	return buf
}

// scopeID writes the id of the random bytes b into buf (newScopeBuf) and
// returns buf as the scope id; buf is not written again.
func scopeID(buf []byte, b *[16]byte) string {
	encodeID((*[idLen]byte)(buf[len(buf)-idLen:]), b)
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// newIDSource returns a ChaCha8 generator seeded from crypto/rand.
func newIDSource() *mrand.ChaCha8 {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // never returns an error (crypto/rand, Go 1.24+)
	return mrand.NewChaCha8(seed)
}

// hexPairs[2*v] and hexPairs[2*v+1] are byte v in lowercase hex.
var hexPairs = func() (p [512]byte) {
	const digits = "0123456789abcdef"
	for v := range 256 {
		p[2*v], p[2*v+1] = digits[v>>4], digits[v&15]
	}
	return p
}()

// encodeID writes b in lowercase hex to dst, as hex.Encode does, a byte
// pair at a time.
func encodeID(dst *[idLen]byte, b *[16]byte) {
	for i, v := range b {
		dst[2*i], dst[2*i+1] = hexPairs[2*int(v)], hexPairs[2*int(v)+1]
	}
}
