// Package sendcheck is the one rule of a guidance message's refusals
// after the owner's check (work's Send and Answer; the Engine contract in
// work/engine.go): their order, and the error each is reported as. The
// in-process engine (package work) and the durable runners (through
// work/driver's Mailbox.Check) each gather the facts over their own
// mailbox, decide with Of, and report a refusal with Err, so that the
// order is changed here for every engine.
package sendcheck

import "strconv"

// Verdict is what the checks decide of a message.
type Verdict uint8

// The verdicts: Accept and Repeat answer the message, the others refuse
// it.
const (
	// Accept: queue the message.
	Accept Verdict = iota
	// Repeat: a repeated command with the same text; it is answered with
	// its first receipt, and nothing is queued again.
	Repeat
	// NotAgent: a message to a child that is not an agent, unless it
	// answers (work.ErrNotAgent).
	NotAgent
	// Conflict: a repeated command with another text (work.ErrConflict).
	Conflict
	// Terminal: a message to a terminal Work (work.ErrTerminal).
	Terminal
	// Full: a message that would take the Work's undelivered guidance
	// over a limit (work.ErrMailboxFull).
	Full

	verdicts
)

func (v Verdict) String() string {
	if v < verdicts {
		return [verdicts]string{"accept", "repeat", "not an agent", "conflict", "terminal", "full"}[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Facts are what the checks look at, each gathered by the engine over
// its own mailbox (and its own limits).
type Facts struct {
	NotAgent  bool // the child is not an agent and the message is no answer
	Recorded  bool // the message's command id has a record
	OtherText bool // the record is of another text (read only when Recorded)
	Terminal  bool // the Work is terminal
	Full      bool // queuing the message would take the mailbox over a limit
}

// Of decides a message from its facts: the first that holds of not an
// agent, a repeated command (another text: Conflict; the same: Repeat),
// terminal, full; Accept when none does. A repeated command is answered
// before the Work's state and mailbox are looked at, so that its replay
// returns the first receipt even after the Work has ended or while its
// mailbox is full.
func Of(f Facts) Verdict {
	switch {
	case f.NotAgent:
		return NotAgent
	case f.Recorded && f.OtherText:
		return Conflict
	case f.Recorded:
		return Repeat
	case f.Terminal:
		return Terminal
	case f.Full:
		return Full
	}
	return Accept
}

// refusals are the errors the refusing verdicts are reported as, by
// verdict (Report).
var refusals [verdicts]error

// Report sets the error each refusing verdict is reported as. Package
// work calls it once, as it initializes, with its own errors: its engine
// and work/driver (which imports work, so runs after) both read them with
// Err, and the pairing of verdict and error is written only there. A
// second call, a refusal left out or a non-refusal given an error panics.
func Report(byVerdict map[Verdict]error) {
	for _, e := range refusals {
		if e != nil {
			panic("sendcheck: Report called twice")
		}
	}
	var r [verdicts]error
	for v := range verdicts {
		if refuses := v >= NotAgent; refuses != (byVerdict[v] != nil) {
			panic("sendcheck: Report needs exactly the refusals' errors")
		}
		r[v] = byVerdict[v]
	}
	refusals = r
}

// Err returns the error v is reported as (Report): nil for Accept and
// Repeat. The callers assert their *Error: a generic Err (asserting to a
// type parameter) added some 20 ns to each of the in-process engine's
// refusals (work's BenchmarkSend).
func Err(v Verdict) error { return refusals[v] }
