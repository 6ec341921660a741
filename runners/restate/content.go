package restate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// Content at rest (WithContentKeys): each content field the runner hands
// to Restate is sealed with AES-256-GCM under the key ring's current key,
// a fresh random nonce each time, with the Work's id and the field's name
// as associated data (a value moved to another Work or field does not
// open). The fields are sealed where they enter Restate (the Engine: a
// Work's input, guidance; the Worker: output, job handles, update values,
// inside the journaled steps that produce them) and opened where they
// leave it (the Engine: output, approval inputs, update values; the
// Worker: input, guidance, handles). No handler seals anything: a handler
// replayed by Restate stores the same bytes again. The control object
// opens update values (its update log decides on the plaintext) and
// stores them as they came, sealed.
//
// A sealed field is an envelope: the key's id (4 bytes of a SHA-256 of
// the key), the nonce (12) and the ciphertext with its tag (16), behind a
// marker: "\x00awc1" for a []byte field, "agentwork-sealed-v1:" and the
// standard base64 of the rest for a string field. Its plaintext's size
// follows from its length, so that sizes (the mailbox's bytes, update
// sizes, result bytes) are counted on the plaintext without a key.

// ErrUndecryptable is the cause (errors.Is) of the error of a read whose
// stored content the key ring cannot open: sealed under a key the ring
// does not hold (dropped too early in a rotation), altered, moved from
// another Work or field, or sealed while this process has no key ring.
// The Engine returns it wrapped in work.ErrUnavailable; it never returns
// such content as an empty value or as the envelope.
var ErrUndecryptable = errors.New("restate: stored content cannot be decrypted with this process's key ring (WithContentKeys)")

// The content fields: their names are associated data of their envelopes.
const (
	fieldInput    = "input"    // the child's input (and an approval's input)
	fieldOutput   = "output"   // a completed child's or job's output
	fieldGuidance = "guidance" // a guidance message's text
	fieldUpdate   = "update"   // an update's value
	fieldHandle   = "handle"   // an external job's handle
)

const (
	contentKeySize = 32 // AES-256
	keyIDSize      = 4
	nonceSize      = 12
	tagSize        = 16
	sealOverhead   = keyIDSize + nonceSize + tagSize
	sealedPrefix   = "agentwork-sealed-v1:" // a sealed string field
)

var sealedMagic = []byte("\x00awc1") // a sealed []byte field

// classContentKey is the failure class of a Work whose Worker could not
// open its input, guidance or job handle (ErrUndecryptable): the child
// does not run with content it cannot read.
const classContentKey = "content_key"

// keyRing is WithContentKeys' keys: keys[0] seals, every one opens. A
// ring made of an invalid key holds its error, which every seal and open
// returns (nothing is then stored as is).
type keyRing struct {
	keys []ringKey
	err  error
}

type ringKey struct {
	id   [keyIDSize]byte
	aead cipher.AEAD
}

func newKeyRing(current []byte, older [][]byte) *keyRing {
	r := &keyRing{}
	for i, k := range append([][]byte{current}, older...) {
		if len(k) != contentKeySize {
			return &keyRing{err: fmt.Errorf("WithContentKeys: key %d has %d bytes; want %d (AES-256)", i, len(k), contentKeySize)}
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return &keyRing{err: fmt.Errorf("WithContentKeys: %w", err)}
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return &keyRing{err: fmt.Errorf("WithContentKeys: %w", err)}
		}
		r.keys = append(r.keys, ringKey{id: keyID(k), aead: aead})
	}
	return r
}

// keyID names a key in its envelopes without revealing it.
func keyID(k []byte) [keyIDSize]byte {
	h := sha256.Sum256(append([]byte("agentwork content key id\x00"), k...))
	return [keyIDSize]byte(h[:keyIDSize])
}

// aad is a field's associated data: the Work's id and the field's name.
func aad(id, field string) []byte {
	return []byte("agentwork\x00" + field + "\x00" + id)
}

// seal returns the envelope's body (key id, nonce, ciphertext and tag) of
// p, sealed under the current key.
func (r *keyRing) seal(id, field string, p []byte) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	k := r.keys[0]
	body := make([]byte, keyIDSize+nonceSize, sealOverhead+len(p))
	copy(body, k.id[:])
	if _, err := rand.Read(body[keyIDSize:]); err != nil {
		return nil, err
	}
	return k.aead.Seal(body, body[keyIDSize:], p, aad(id, field)), nil
}

// open returns the plaintext of an envelope's body.
func (r *keyRing) open(id, field string, body []byte) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: the Work's %s is sealed and this process has no key ring", ErrUndecryptable, field)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecryptable, r.err)
	}
	kid, nonce, ct := body[:keyIDSize], body[keyIDSize:keyIDSize+nonceSize], body[keyIDSize+nonceSize:]
	known := false
	for _, k := range r.keys {
		if !bytes.Equal(k.id[:], kid) {
			continue
		}
		known = true
		if p, err := k.aead.Open(nil, nonce, ct, aad(id, field)); err == nil {
			return p, nil
		}
	}
	if !known {
		return nil, fmt.Errorf("%w: the Work's %s is sealed under key id %x, which the ring does not hold", ErrUndecryptable, field, kid)
	}
	return nil, fmt.Errorf("%w: the Work's %s does not authenticate under key id %x (altered, or sealed for another Work or field)",
		ErrUndecryptable, field, kid)
}

// sealBytes seals a []byte field (as is without a key ring).
func (r *keyRing) sealBytes(id, field string, p []byte) ([]byte, error) {
	if r == nil {
		return p, nil
	}
	body, err := r.seal(id, field, p)
	if err != nil {
		return nil, err
	}
	return append(bytes.Clone(sealedMagic), body...), nil
}

// openBytes opens a []byte field; one that is not sealed (stored before
// the keys were given, or by a process without them) is returned as is.
func (r *keyRing) openBytes(id, field string, b []byte) ([]byte, error) {
	body, ok := sealedBody(b)
	if !ok {
		return b, nil
	}
	return r.open(id, field, body)
}

// sealString seals a string field (as is without a key ring).
func (r *keyRing) sealString(id, field, s string) (string, error) {
	if r == nil {
		return s, nil
	}
	body, err := r.seal(id, field, []byte(s))
	if err != nil {
		return "", err
	}
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(body), nil
}

// openString opens a string field; one that is not sealed is returned as
// is.
func (r *keyRing) openString(id, field, s string) (string, error) {
	body, ok := sealedStringBody(s)
	if !ok {
		return s, nil
	}
	p, err := r.open(id, field, body)
	return string(p), err
}

func sealedBody(b []byte) ([]byte, bool) {
	body, ok := bytes.CutPrefix(b, sealedMagic)
	return body, ok && len(body) >= sealOverhead
}

func sealedStringBody(s string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(s, sealedPrefix)
	if !ok {
		return nil, false
	}
	body, err := base64.RawStdEncoding.DecodeString(rest)
	return body, err == nil && len(body) >= sealOverhead
}

// plainLen is the size of a string field's plaintext, sealed or not.
func plainLen(s string) int {
	if body, ok := sealedStringBody(s); ok {
		return len(body) - sealOverhead
	}
	return len(s)
}

// plainLenBytes is the size of a []byte field's plaintext, sealed or not.
func plainLenBytes(b []byte) int {
	if body, ok := sealedBody(b); ok {
		return len(body) - sealOverhead
	}
	return len(b)
}

// unreadable is an Engine's error for content it cannot open.
func unreadable(err error) error {
	return driver.Wrap(driver.Detail(work.ErrUnavailable, "stored content cannot be decrypted"), err)
}
