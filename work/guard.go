package work

// uninitialized reports whether s, an Engine with no impl, was not made by
// New: nil, or a zero Engine (New makes idle).
func (s *Engine) uninitialized() bool { return s == nil || s.idle == nil }

// admissible checks what precedes every Start and Call: that s was made
// by New with a valid configuration and that spec is valid (Spec.Validate).
func (s *Engine) admissible(spec *Spec) error {
	if s.uninitialized() {
		return ErrNotInitialized
	}
	if s.optErr != nil {
		return s.optErr
	}
	return spec.validate()
}

// poolable is admissible for SetPool.
func (s *Engine) poolable(b Budget) error {
	if s.uninitialized() {
		return ErrNotInitialized
	}
	if s.optErr != nil {
		return s.optErr
	}
	return checkBudget("SetPool", b, false) // Budget.Validate, naming SetPool
}
