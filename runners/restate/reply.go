package restate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxReplyBytes caps the body of an ingress or admin reply the runner
// reads: a reply over it is refused before it is decoded (errReplyTooLarge).
// It is above what any reply can hold: a registry page, a Work's output
// under the engine's largest result bound, an introspection page.
const maxReplyBytes = 64 << 20

// errReplyTooLarge is a reply whose body is over its cap. The call is not
// tried again: the same call would get the same reply.
var errReplyTooLarge = errors.New("restate: reply over its byte cap")

// decodeReply reads a reply's body (at most limit bytes: over it, the
// reply is refused unread, errReplyTooLarge) and, for a 2xx status,
// decodes it into out (nil, or an empty body: nothing to decode). Any
// other status is an errStatus carrying the body's code only: the body's
// message is never kept, as it may echo content.
func decodeReply(status int, body io.Reader, limit int64, out any) error {
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return err
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("%w (%d bytes)", errReplyTooLarge, limit)
	}
	if status/100 != 2 {
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(b, &e)
		return &errStatus{Status: status, Code: e.Code}
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, out)
}
