package langchaingo

import (
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// resumeBlock is the updates block of the run RunUntilSettled is
// resuming, and the notice (in the run's input) it follows.
type resumeBlock struct{ marker, block string }

// withUpdatesBlock inserts the resumed run's updates block, as a user
// message of its own, right after the last user message holding its
// notice (at the end when none does). Requests outside a resumed run
// with updates are returned as they are.
func (k *Kit) withUpdatesBlock(msgs []llms.MessageContent) []llms.MessageContent {
	r := k.resume.Load()
	if r == nil {
		return msgs
	}
	at := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman && strings.Contains(messageText(msgs[i]), r.marker) {
			at = i + 1
			break
		}
	}
	out := make([]llms.MessageContent, 0, len(msgs)+1)
	out = append(out, msgs[:at]...)
	out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, r.block))
	return append(out, msgs[at:]...)
}

func messageText(m llms.MessageContent) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
