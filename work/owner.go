package work

import "strings"

// Owner is an agent instance that owns Work. Only its owner can see, await,
// cancel, detach or steer a Work. The zero Owner is invalid.
//
// A top-level owner has depth 0. A running child's own scope
// (Execution.Scope) is an Owner one level deeper than the child's owner; the
// depth limit applies to it.
type Owner struct {
	id    string
	depth int
	sc    scopeState // set for a child's scope by the engine that runs the child
	// slash: a top-level id with a "/" (NewOwner), which every operation
	// refuses; decided once, not on every call.
	slash bool
}

// scopeState is what an engine keeps of a child's own owner scope
// (Execution.Scope): the scope's Owner carries it back to that engine,
// which alone knows its type (the in-process engine's *scope). A top-level
// owner has none, and so has a child's scope that another Engine made.
type scopeState interface{ isScope() }

// NewOwner returns the top-level owner named id. Two Owners with the same id
// are the same owner. The id may not contain "/" (child scopes use it):
// every operation refuses such an owner with ErrInvalidOwner (work/boundary's
// Rows returns no rows and Release does nothing), so no top-level id can
// reach a child's scope.
func NewOwner(id string) Owner { return Owner{id: id, slash: strings.Contains(id, "/")} }

// ID returns the owner's id.
func (o Owner) ID() string { return o.id }

// Depth returns the owner's nesting depth: 0 for a top-level owner.
func (o Owner) Depth() int { return o.depth }

// IsZero reports whether o is the zero (invalid) Owner.
func (o Owner) IsZero() bool { return o.id == "" }
