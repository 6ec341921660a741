package work

// Owner is an agent instance that owns Work. Only its owner can see, await,
// cancel, detach or steer a Work. The zero Owner is invalid.
//
// A top-level owner has depth 0. A running child's own scope
// (Execution.Scope) is an Owner one level deeper than the child's owner; the
// depth limit applies to it.
type Owner struct {
	id    string
	depth int
	sc    *scope // set for a child's scope
}

// scope is a child's own owner scope (Execution.Scope). Its fields are
// guarded by the Supervisor's lock.
type scope struct {
	ended  bool        // the child has returned: the scope admits no more Work
	work   *item       // the background Work whose scope this is; nil for a foreground call's
	parent *scope      // the scope the Work or call was started in; nil under a top-level owner
	os     *ownerState // the scope's registry entry while it has one
	acct   *account    // the child's budget reservation: its children reserve from it
}

// holder returns the background Work whose running slot the code of scope
// sc runs on: the Work itself for a background child's scope, the nearest
// enclosing one for a foreground call's scope, nil when no Work encloses it
// (a foreground call made by a top-level owner).
func (sc *scope) holder() *item {
	for ; sc != nil; sc = sc.parent {
		if sc.work != nil {
			return sc.work
		}
	}
	return nil
}

// NewOwner returns the top-level owner named id. Two Owners with the same id
// are the same owner. The id may not contain "/" (child scopes use it):
// every operation refuses such an owner with ErrInvalidOwner (Rows returns
// no rows and Release does nothing), so no top-level id can reach a child's
// scope.
func NewOwner(id string) Owner { return Owner{id: id} }

// ID returns the owner's id.
func (o Owner) ID() string { return o.id }

// Depth returns the owner's nesting depth: 0 for a top-level owner.
func (o Owner) Depth() int { return o.depth }

// IsZero reports whether o is the zero (invalid) Owner.
func (o Owner) IsZero() bool { return o.id == "" }
