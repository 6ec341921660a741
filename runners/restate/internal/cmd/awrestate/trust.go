package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"os"

	"github.com/agentwork/agentwork/runners/restate"
)

// The deployment's trust options, handed to every process it starts by
// the driving process through the environment: the server's request
// identity key, which the service processes check
// (restate.WithIdentityKeys; every cluster, the demo's too), and the
// content key every Engine and Worker seals content with
// (restate.WithContentKeys; the package's tests, sealContent).
const (
	identityKeyEnv = "AGENTWORK_TEST_IDENTITY_KEY" // "publickeyv1_..."
	contentKeyEnv  = "AGENTWORK_TEST_CONTENT_KEY"  // 64 hex digits
)

// trustOptions are the options the environment gives (none when it gives
// none).
func trustOptions() []restate.Option {
	var opts []restate.Option
	if k := os.Getenv(identityKeyEnv); k != "" {
		opts = append(opts, restate.WithIdentityKeys(k))
	}
	if k, err := hex.DecodeString(os.Getenv(contentKeyEnv)); err == nil && len(k) == 32 {
		opts = append(opts, restate.WithContentKeys(k))
	}
	return opts
}

// newIdentity returns a fresh request identity key for a server the
// driving process starts.
func newIdentity() (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	return priv, err
}

// sealContent puts a fresh content key in the environment unless it holds
// one: every process started after it seals with that key.
func sealContent() error {
	if os.Getenv(contentKeyEnv) != "" {
		return nil
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return err
	}
	return os.Setenv(contentKeyEnv, hex.EncodeToString(k))
}
