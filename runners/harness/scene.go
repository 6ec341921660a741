package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Scene is one owner's Work in every state a chaos driver holds at the
// moment of a fault, driven through a coordinator process (the package
// doc's protocol, with the commands of Model and the runners' start,
// held, asker, job, send, cancel, approve, answer, updates, status,
// result, pending and list): Populate before the fault, Outage while
// the service is away, Recover after, then Collect into the Tally.
type Scene struct {
	Co    *Coordinator
	Dir   string // where the gate files go
	Tally *Tally
	// WaitStarted waits until an attempt of the Work started (a worker
	// said so); Starts counts the attempts said started.
	WaitStarted func(id string, timeout time.Duration) error
	Starts      func(id string) int
	// Job, when set, starts an external job (the runner's batch target)
	// and Finish ends it at its fake service.
	Job    func() (string, error)
	Finish func(id string)
	// Detached reads a detached Work's state from the service (its owner
	// cannot): "" when the runner cannot tell.
	Detached func(id string) (string, error)
	// Settle bounds each wait for a Work to end after the fault.
	Settle time.Duration

	works    []*sceneWork
	byName   map[string]*sceneWork
	guidance map[string][]string // work name -> guidance sent, in order
	calls    int
}

type sceneWork struct {
	name, id, label string
	gate            string
	live, detached  bool
	retryable       bool
	want            func(Result) error
}

func (s *Scene) add(name, label, id, gate string) *sceneWork {
	if s.byName == nil {
		s.byName, s.guidance = map[string]*sceneWork{}, map[string][]string{}
	}
	w := &sceneWork{name: name, id: id, label: label, gate: gate}
	s.works = append(s.works, w)
	s.byName[name] = w
	return w
}

// ID returns the id of the Work the scene named name.
func (s *Scene) ID(name string) string {
	if w := s.byName[name]; w != nil {
		return w.id
	}
	return ""
}

func (s *Scene) gate(name string) string { return filepath.Join(s.Dir, s.slug()+"-gate-"+name) }

// slug is the fault's name as one word (call ids and file names).
func (s *Scene) slug() string { return strings.ReplaceAll(s.Tally.Fault, " ", "-") }

func (s *Scene) open(name string) error { return os.WriteFile(s.gate(name), nil, 0o644) }

// Populate starts the scene's Work, on workers with one running slot per
// target each (two workers): gated g1 and g2 running, g3 queued behind
// them; slow s1 (waits for one guidance message) and s2 (runs until
// cancelled) running, s3 queued with two guidance messages queued for
// it; a deaf agent d1 running (inside a long provider call); an asker a1
// with two updates and its question open; h1 awaiting approval; x1
// launched by the model and detached; and, with Job, a job j1 between
// polls. It waits until each is in that state.
func (s *Scene) Populate(canary string) error {
	start := func(name, label, input string, wait bool) error {
		id, err := s.Co.Start(label, input)
		if err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
		s.add(name, label, id, "")
		if wait {
			return s.WaitStarted(id, 2*time.Minute)
		}
		return nil
	}
	for _, n := range []string{"g1", "g2"} {
		if err := start(n, "gated", s.gate(n), true); err != nil {
			return err
		}
		s.byName[n].gate = n
	}
	if err := start("g3", "gated", s.gate("g3"), false); err != nil {
		return err
	}
	s.byName["g3"].gate = "g3"
	if err := start("s1", "slow", "1 "+canary, true); err != nil {
		return err
	}
	if err := start("s2", "slow", "0", true); err != nil {
		return err
	}
	if err := start("s3", "slow", "2 "+canary, false); err != nil {
		return err
	}
	for i := 1; i <= 2; i++ {
		msg := fmt.Sprintf("queued-guidance-%d", i)
		var r struct{ Outcome string }
		if err := s.Co.Do(&r, "send", s.ID("s3"), fmt.Sprintf("%s-s3-%d", s.slug(), i), msg); err != nil || r.Outcome != "accepted" {
			return fmt.Errorf("send to queued s3: %+v %v", r, err)
		}
		s.guidance["s3"] = append(s.guidance["s3"], msg)
	}
	if err := start("d1", "deaf", s.gate("d1"), true); err != nil {
		return err
	}
	s.byName["d1"].gate = "d1"
	var ar struct{ Work string }
	if err := s.Co.Do(&ar, "asker", "2"); err != nil {
		return fmt.Errorf("asker: %w", err)
	}
	s.add("a1", "asker", ar.Work, "")
	if err := s.WaitStarted(ar.Work, 2*time.Minute); err != nil {
		return err
	}
	if err := s.waitFor(time.Minute, func() error { return s.updates("a1", true) }); err != nil {
		return err
	}
	var hr struct{ Work string }
	if err := s.Co.Do(&hr, "held", "gated", s.gate("h1")); err != nil {
		return fmt.Errorf("held: %w", err)
	}
	s.add("h1", "gated", hr.Work, "h1").live = true // until approved
	ans := s.modelCall("launch", "gated", s.slug()+"-launch-x1", s.gate("x1"))
	var ref struct {
		Kind, ID string
	}
	if err := json.Unmarshal([]byte(ans.Answer), &ref); err != nil || ref.Kind != "work.ref" {
		return fmt.Errorf("launch x1: %+v", ans)
	}
	x := s.add("x1", "gated", ref.ID, "x1")
	d := s.modelCall("tool", s.slug()+"-detach-x1", `{"action":"detach","id":"`+ref.ID+`"}`)
	if !strings.Contains(d.Answer, `"detached":true`) {
		return fmt.Errorf("detach x1: %+v", d)
	}
	x.detached = true
	if s.Job != nil {
		id, err := s.Job()
		if err != nil {
			return fmt.Errorf("job: %w", err)
		}
		s.add("j1", "batch", id, "")
	}
	return nil
}

// updates checks that a1's updates are u1, u2 and the question q (open
// says the question must be the last).
func (s *Scene) updates(name string, open bool) error {
	var u struct {
		Keys     []string
		Question string
	}
	if err := s.Co.Do(&u, "updates", s.ID(name)); err != nil {
		return err
	}
	if strings.Join(u.Keys, ",") != "u1,u2,q" || (open && u.Question != "q") {
		return fmt.Errorf("%s's updates: %+v, want u1,u2,q", name, u)
	}
	return nil
}

func (s *Scene) waitFor(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond) // polling a remote state with a deadline
	}
}

// modelCall runs one model command (tool or launch) and returns its
// answer.
func (s *Scene) modelCall(cmd ...string) Answer {
	var a Answer
	if err := s.Co.Do(&a, cmd...); err != nil {
		a.GoErr = "protocol: " + err.Error()
	}
	return a
}

// Outage runs, at once, the model-facing calls of a coordinator while
// the service is away (list, status, result, send, a launch, the status
// block), each with its bound, and records them in the Tally. The gate
// of g1 opens first: its child ends while the service is away.
func (s *Scene) Outage(bound time.Duration) error {
	if err := s.open("g1"); err != nil {
		return err
	}
	s.calls++
	n := strconv.Itoa(s.calls)
	cmds := [][]string{
		{"tool", s.slug() + "-list-" + n, `{"action":"list"}`},
		{"tool", s.slug() + "-status-" + n, `{"action":"status","id":"` + s.ID("g2") + `"}`},
		{"tool", s.slug() + "-result-" + n, `{"action":"result","id":"` + s.ID("g2") + `","timeout":"2s"}`},
		{"tool", s.slug() + "-send-" + n, `{"action":"send","id":"` + s.ID("d1") + `","message":"outage guidance"}`},
		{"launch", "gated", s.slug() + "-launch-" + n, s.gate("l" + n)},
		{"block"},
	}
	b, _ := json.Marshal(cmds)
	var raw []json.RawMessage
	began := time.Now()
	if err := s.Co.Do(&raw, "calls", string(b)); err != nil {
		s.Tally.Calls = append(s.Tally.Calls, ModelCall{What: "calls", Took: time.Since(began), Bound: bound})
		return nil
	}
	for i, r := range raw {
		c := ModelCall{What: strings.Join(cmds[i][:min(2, len(cmds[i]))], " "), Bound: bound + 2*time.Second}
		if cmds[i][0] == "block" {
			var bl struct {
				Block string
				Ms    int64
			}
			_ = json.Unmarshal(r, &bl)
			c.Answered, c.Took = true, time.Duration(bl.Ms)*time.Millisecond
			// The block is a line, not an error object: the table counts
			// a stated "status unavailable" under a code of its own.
			c.Answer = `{"error":{"code":"block:status_unavailable"}}`
			if !strings.Contains(bl.Block, "status unavailable") {
				c.Answer = bl.Block
				s.Tally.Problems = append(s.Tally.Problems, fmt.Sprintf("the status block during the outage is %q: neither rows read now nor a stated \"status unavailable\"", bl.Block))
			}
		} else {
			var a Answer
			_ = json.Unmarshal(r, &a)
			c.Answered, c.Answer, c.GoErr, c.Took = true, a.Answer, a.GoErr, time.Duration(a.Ms)*time.Millisecond
			if cmds[i][0] == "launch" {
				var ref struct{ Kind, ID string }
				if json.Unmarshal([]byte(a.Answer), &ref) == nil && ref.Kind == "work.ref" {
					// Admitted after all: it is Work of the scene.
					s.add("l"+n, "gated", ref.ID, "l"+n)
				}
			}
		}
		s.Tally.Calls = append(s.Tally.Calls, c)
	}
	return nil
}

// Recover drives every Work of the scene to its end once the service is
// back (restarted is when it answered again): the first completion is
// timed, guidance and an answer are sent, s2 is cancelled, h1 approved
// (it must still be pending), every gate opens, the job finishes; then
// each Work's result is checked.
func (s *Scene) Recover(restarted time.Time, canaryOut string) error {
	s.Tally.Restarted = restarted
	// The first Work completed after the restart (g1's child ended
	// during the outage; g2's gate opens now).
	if err := s.open("g2"); err != nil {
		return err
	}
	if err := s.waitFor(s.Settle, func() error {
		for _, w := range s.works {
			if w.detached {
				continue
			}
			var r Result
			if err := s.Co.Do(&r, "status", w.id); err == nil && r.Status.State == "completed" {
				s.Tally.FirstDone = time.Now()
				return nil
			}
		}
		return errors.New("no Work completed yet")
	}); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "no Work completed after the restart within "+s.Settle.String())
	}
	var pending []struct {
		Work struct {
			ID string `json:"id"`
		}
	}
	if err := s.Co.Do(&pending, "pending"); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "pending after the fault: "+err.Error())
	} else if len(pending) != 1 || pending[0].Work.ID != s.ID("h1") {
		s.Tally.Problems = append(s.Tally.Problems, fmt.Sprintf("pending after the fault: %+v, want h1 only", pending))
	}
	if err := s.updates("a1", true); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "updates after the fault: "+err.Error())
	}
	msg := "after-fault-guidance"
	if err := s.Co.Do(nil, "send", s.ID("s1"), s.slug()+"-s1", msg); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "send to s1 after the fault: "+err.Error())
	}
	s.guidance["s1"] = []string{msg}
	if err := s.Co.Do(nil, "cancel", s.ID("s2")); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "cancel s2 after the fault: "+err.Error())
	}
	if err := s.Co.Do(nil, "answer", s.ID("a1"), s.slug()+"-a1", "yes"); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "answer a1 after the fault: "+err.Error())
	}
	for _, w := range s.works {
		if w.gate != "" {
			if err := s.open(w.gate); err != nil {
				return err
			}
		}
	}
	if err := s.Co.Do(nil, "approve", s.ID("h1")); err != nil {
		s.Tally.Problems = append(s.Tally.Problems, "approve h1 after the fault: "+err.Error())
	}
	s.byName["h1"].live = false
	if s.Finish != nil && s.ID("j1") != "" {
		s.Finish(s.ID("j1"))
	}
	s.wants(canaryOut)
	return nil
}

// wants sets what each Work's end must be.
func (s *Scene) wants(canaryOut string) {
	state := func(st string) func(Result) error {
		return func(r Result) error {
			if r.Status.State != st {
				return fmt.Errorf("state %s (class %s), want %s", r.Status.State, r.Class, st)
			}
			return nil
		}
	}
	digest := func(name, prefix string) func(Result) error {
		return func(r Result) error {
			if err := state("completed")(r); err != nil {
				return err
			}
			if want := prefix + Digest(s.guidance[name]); !strings.HasPrefix(r.Result, want) {
				return fmt.Errorf("result %q, want the guidance %s in order (%s)", r.Result, s.guidance[name], want)
			}
			return nil
		}
	}
	for _, w := range s.works {
		w.want = state("completed")
	}
	s.byName["s1"].want = digest("s1", "took guidance ")
	s.byName["s3"].want = digest("s3", "took guidance ")
	s.byName["s2"].want = state("cancelled")
	s.byName["a1"].want = func(r Result) error {
		if err := state("completed")(r); err != nil {
			return err
		}
		if want := "answered " + Digest([]string{"yes"}); !strings.HasPrefix(r.Result, want) {
			return fmt.Errorf("result %q, want %s", r.Result, want)
		}
		return nil
	}
}

// CheckTelemetry waits (ten seconds at most) until every Work of the
// scene had its invoke_agent span exported once and no canary shows in
// dir's span files and logs (CheckTelemetry), and records what is still
// wrong then.
func (s *Scene) CheckTelemetry(canaries ...string) {
	var ids []string
	for _, w := range s.Tally.Works {
		ids = append(ids, w.ID)
	}
	var problems []string
	_ = s.waitFor(10*time.Second, func() error {
		if problems = CheckTelemetry(s.Dir, ids, canaries); len(problems) > 0 {
			return errors.New("telemetry")
		}
		return nil
	})
	s.Tally.Problems = append(s.Tally.Problems, problems...)
}

// Collect reads every Work's end (each waits up to Settle), the notices
// and the owner's list (a Work the owner lists that the scene did not
// know of is added: admitted though the launch was answered an error)
// into the Tally.
func (s *Scene) Collect() {
	var list []Status
	if err := s.Co.Do(&list, "list"); err == nil {
		known := map[string]bool{}
		for _, w := range s.works {
			known[w.id] = true
		}
		for _, st := range list {
			if !known[st.Work.ID] {
				s.add("ghost-"+st.Work.ID[:8], "?", st.Work.ID, "")
				s.Tally.Notes = append(s.Tally.Notes, "Work "+st.Work.ID[:8]+" was admitted though its launch's answer said otherwise")
			}
		}
	}
	for _, w := range s.works {
		seen := Seen{ID: w.id, Label: w.label, Retryable: w.retryable, Live: w.live, Starts: s.Starts(w.id)}
		if w.detached {
			seen.Found = true
			if s.Detached != nil {
				st, err := s.Detached(w.id)
				if err != nil {
					s.Tally.Problems = append(s.Tally.Problems, "detached x1: "+err.Error())
				}
				seen.State = st
				if st == "" {
					seen.Live = true
				}
			} else {
				seen.Live = true
			}
			seen.Attempt = max(seen.Starts, 1)
			s.Tally.Works = append(s.Tally.Works, seen)
			continue
		}
		r, err := s.Co.Settled(w.id, s.Settle)
		seen.Found = err == nil
		seen.State, seen.Class, seen.Attempt = r.Status.State, r.Class, r.Status.Attempt
		seen.Notify = true
		if err == nil && w.want != nil {
			if werr := w.want(r); werr != nil {
				s.Tally.Problems = append(s.Tally.Problems, w.name+": "+werr.Error())
			}
		}
		s.Tally.Works = append(s.Tally.Works, seen)
	}
	// Notices come by polling the registry: wait until every settled
	// Work's has come, or the bound.
	var notices Notices
	_ = s.waitFor(30*time.Second, func() error {
		if err := s.Co.Do(&notices, "notices"); err != nil {
			return err
		}
		for _, w := range s.Tally.Works {
			if w.Notify && IsTerminal(w.State) && notices.Settled[w.ID] == 0 {
				return errors.New("notices missing")
			}
		}
		return nil
	})
	for i := range s.Tally.Works {
		s.Tally.Works[i].Notices = notices.Settled[s.Tally.Works[i].ID]
	}
}
