package middleware

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/agentwork/agentwork/work"
)

// Error codes of the model-facing error object, besides the work package's
// (not_found is never an error object: it is {"status":"not_found"}).
const (
	CodeInvalidInput   = "invalid_input"   // not a JSON object, wrong types, unknown fields
	CodeMissingAction  = "missing_action"  // work tool input without action
	CodeUnknownAction  = "unknown_action"  // an action other than the six
	CodeMissingID      = "missing_id"      // an id action without id
	CodeInvalidTimeout = "invalid_timeout" // a malformed or negative timeout
	CodeMissingMessage = "missing_message" // send without a non-empty message
	CodeChildInput     = "invalid_child_input"
	CodeInputTooLarge  = "input_too_large" // a child input over its MaxInputBytes; nothing was started
	CodeReleased       = "released"        // a child call or list after the Kit's Release
	CodeNilContext     = "nil_context"     // a tool called with a nil context.Context
)

// ErrorObject is the one model-facing error shape:
//
//	{"error":{"code":"...","message":"..."}}
//
// Code is stable; Message is a clear sentence with no child output, failure
// text, prompt or guidance text in it.
type ErrorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// JSON returns the encoded error object.
func (e ErrorObject) JSON() string {
	b, _ := json.Marshal(struct {
		Error ErrorObject `json:"error"`
	}{e})
	return string(b)
}

// MaxQuoted is the most bytes of a field name or value the model sent that
// an error message quotes; a longer one is cut at a rune boundary and
// marked with "…" after the closing quote, so a huge key or value never
// makes a huge reply.
const MaxQuoted = 64

// quote returns s as a Go-quoted string of at most its first MaxQuoted
// bytes, followed by "…" when s was cut.
func quote(s string) string {
	head, cut := prefix(s, MaxQuoted)
	if !cut {
		return strconv.Quote(s)
	}
	return strconv.Quote(head) + "…"
}

// maxValidateMessage is the most bytes of a Child.Validate error's text an
// error message shows.
const maxValidateMessage = 256

// clip cuts msg to at most n bytes, marking a cut with "…".
func clip(msg string, n int) string {
	head, cut := prefix(msg, n)
	if !cut {
		return msg
	}
	return head + "…"
}

// prefix returns at most the first n bytes of s, cut back to a rune
// boundary (by at most three bytes, so invalid UTF-8 still gets a
// prefix), and whether it cut anything.
func prefix(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n], true
}

func errObj(code, msg string) ErrorObject { return ErrorObject{Code: code, Message: msg} }

// fromWork maps an engine error to the error object.
func fromWork(err error) ErrorObject {
	var we *work.Error
	if errors.As(err, &we) {
		if we.Code == work.ErrInvalidTimeout.Code {
			return errObj(CodeInvalidTimeout, we.Error())
		}
		if we.Code == work.ErrEmptyMessage.Code {
			return errObj(CodeMissingMessage, we.Error())
		}
		return errObj(we.Code, we.Error())
	}
	return errObj("internal", "internal error")
}

const notFound = `{"status":"not_found"}`

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return errObj("internal", "internal encoding error").JSON()
	}
	return string(b)
}
