package work

// SlotsForTest reports the pool slots in use, the running Works that
// execute (neither lending their slot nor waiting to reclaim it), and the
// Works waiting to reclaim a slot. It checks the lending chains on the way
// and panics if one is broken.
func (s *Supervisor) SlotsForTest() (used, executing, reclaiming int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for it := s.running.front(); it != nil; it = it.next {
		if !it.lending && it.reclaim == nil {
			executing++
		}
		if it.borrower != nil && it.borrower.lender != it {
			panic("work: borrower does not point back at its lender")
		}
		if it.lender != nil && it.lender.borrower != it {
			panic("work: lender does not point at its borrower")
		}
	}
	return s.used, executing, len(s.reclaimers)
}

// SetReclaimHookForTest sets a function called (under the Supervisor's
// lock: it must not block or call back) each time a Work starts waiting to
// reclaim its slot.
func (s *Supervisor) SetReclaimHookForTest(f func()) {
	s.mu.Lock()
	s.reclaimHook = f
	s.mu.Unlock()
}

// SetBoundaryHookForTest sets a function called (under the Supervisor's
// lock: it must not block or call back) each time a model-request boundary
// starts waiting for its Work's slot.
func (s *Supervisor) SetBoundaryHookForTest(f func()) {
	s.mu.Lock()
	s.boundHook = f
	s.mu.Unlock()
}

// Unexported names the external tests use.
const (
	ProfileLabel     = profileLabel
	ProgressInterval = progressInterval
)

// CanTransition reports whether from -> to is a legal lifecycle edge.
func CanTransition(from, to State) bool { return canTransition(from, to) }

// RefKind returns r's JSON kind.
func RefKind(r Ref) string { return r.kind() }
