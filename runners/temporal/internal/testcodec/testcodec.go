// Package testcodec is the encryption codec the Temporal runner's tests
// and its multi-process harness (awtemporal) run under: a
// converter.PayloadCodec that seals each payload with AES-256-GCM under a
// key the test holds, as a deployment's encryption codec does. It is
// written once here so that the runner's tests, the worker processes they
// start and make integration-temporal's processes seal and open alike.
package testcodec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Encoding is the metadata encoding of a payload the codec sealed.
const Encoding = "binary/agentwork-test-aes-gcm"

// KeyEnv carries the codec's key (64 hex digits) to the processes a test
// starts, so that they seal and open with it.
const KeyEnv = "AGENTWORK_TEST_CODEC_KEY"

var (
	keyOnce sync.Once
	key     []byte
)

// Key returns the codec's AES-256 key: KeyEnv's when it holds one, else a
// fresh one for this process, which Key also puts in KeyEnv so that
// processes started after it inherit it.
func Key() []byte {
	keyOnce.Do(func() {
		if k, ok := envKey(); ok {
			key = k
			return
		}
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic(err)
		}
		_ = os.Setenv(KeyEnv, hex.EncodeToString(key))
	})
	return key
}

// Env is the environment entry that gives a process Key.
func Env() string { return KeyEnv + "=" + hex.EncodeToString(Key()) }

// FromEnv returns the default data converter under the codec with
// KeyEnv's key, and false when KeyEnv holds no key.
func FromEnv() (converter.DataConverter, bool) {
	if _, ok := envKey(); !ok {
		return nil, false
	}
	return Converter(), true
}

// envKey is KeyEnv's key, if it holds one.
func envKey() ([]byte, bool) {
	k, err := hex.DecodeString(os.Getenv(KeyEnv))
	return k, err == nil && len(k) == 32
}

// Converter returns the default data converter under the codec with Key.
func Converter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(Key()))
}

// Codec seals and opens payloads with AES-256-GCM.
type Codec struct{ aead cipher.AEAD }

// New returns the codec with a 32-byte key.
func New(key []byte) *Codec {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &Codec{aead: aead}
}

// Encode seals each payload (its protobuf encoding, metadata included),
// a fresh nonce each.
func (c *Codec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, c.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding)},
			Data:     c.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode opens each sealed payload and passes the others (a search
// attribute's, the server's own) as they are.
func (c *Codec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		n := c.aead.NonceSize()
		if len(p.GetData()) < n {
			return nil, errors.New("test codec: short payload")
		}
		plain, err := c.aead.Open(nil, p.GetData()[:n], p.GetData()[n:], nil)
		if err != nil {
			return nil, fmt.Errorf("test codec: %w", err)
		}
		var q commonpb.Payload
		if err := proto.Unmarshal(plain, &q); err != nil {
			return nil, err
		}
		out[i] = &q
	}
	return out, nil
}
