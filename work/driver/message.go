package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/agentwork/agentwork/work"
)

// checkMessage is the check of a guidance message before it is sent:
// work.ErrEmptyMessage for blank text, work.ErrMessageTooLarge past
// maxBytes (the engine's work.WithMaxMessageBytes, resolved).
func checkMessage(message string, maxBytes int) error {
	if strings.TrimSpace(message) == "" {
		return work.ErrEmptyMessage
	}
	if len(message) > maxBytes {
		return work.ErrMessageTooLarge
	}
	return nil
}

// Digest is the hex SHA-256 of s ("" for ""), what a registry keeps of a
// message, a command id or a launch identity instead of the text.
func Digest(s string) string {
	if s == "" {
		return ""
	}
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}
