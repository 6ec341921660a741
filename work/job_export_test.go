package work

// PollBoundForTest reports, for target label's poll bound, the polls that
// run and the Works whose poll is due and waits for the bound.
func (s *Engine) PollBoundForTest(label string) (running, due int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.jobs.bounds[label]
	if b == nil {
		return 0, 0
	}
	for _, it := range b.due[b.head:] {
		if it.job != nil && it.job.phase == jobDue {
			due++
		}
	}
	return b.n, due
}
