package middleware

import (
	"encoding/json"
	"errors"

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

func errObj(code, msg string) ErrorObject { return ErrorObject{Code: code, Message: msg} }

// fromWork maps an engine error to the error object.
func fromWork(err error) ErrorObject {
	var we *work.Error
	if errors.As(err, &we) {
		if we.Code == work.ErrInvalidDuration.Code || we.Code == work.ErrInvalidTimeout.Code {
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
