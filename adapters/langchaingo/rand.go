package langchaingo

import (
	"crypto/rand"
	"encoding/hex"
)

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
