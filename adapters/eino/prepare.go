package eino

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"time"

	"github.com/cloudwego/eino/components/tool"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// releaseTimeout bounds Release's call of the engine when no Kit was
// prepared (a remote engine's RPC; the in-process one answers at once).
const releaseTimeout = 30 * time.Second

// prepared is one run's preparation: the Kit and the tool list the agent
// runs with.
type prepared struct {
	set   *middleware.Kit
	block *middleware.Kit // renders the status block (the owner's base Kit at top level)
	tools []tool.BaseTool
	src   []tool.BaseTool // the tool list it was prepared from
}

// hasChildren reports whether ts holds a child of this package.
func hasChildren(ts []tool.BaseTool) bool {
	for _, t := range ts {
		switch t.(type) {
		case *Child, BackgroundChild:
			return true
		}
	}
	return false
}

// prepare returns the run's preparation of ts. A top-level run reuses the
// last one while the tool list is the same; inside a child, the run's
// tools are prepared for the child's own scope each run.
func (m *Middleware) prepare(ctx context.Context, ts []tool.BaseTool) (*prepared, error) {
	if m == nil || m.sup == nil {
		if m != nil && m.prepErr != nil {
			return nil, m.prepErr // New(nil): middleware.ErrNilEngine, as New says
		}
		return nil, ErrNoEngine
	}
	ex, inChild := work.ExecutionFrom(ctx)
	if inChild {
		if m.cfg.named || m.cfg.pool != nil {
			return nil, fmt.Errorf("%w: WithOwner or WithPool on an agent that runs inside a child (its Work belongs to the child's own scope)", ErrInsideChild)
		}
		p, err := m.build(ctx, ex.Scope(), ts)
		if err == nil {
			p.block = p.set
		}
		return p, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.prepErr != nil {
		return nil, m.prepErr
	}
	if p := m.current; p != nil && sameTools(p.src, ts) {
		return p, nil
	}
	base, err := m.baseLocked(ctx)
	if err != nil {
		return nil, err
	}
	p, err := m.build(ctx, m.owner, ts)
	if err != nil {
		return nil, err
	}
	p.block = base
	m.current = p
	m.sets = append(m.sets, p.set)
	return p, nil
}

// baseLocked returns the owner's base Kit (no tools), preparing it first:
// it renders the coordinator's status blocks and runs RunUntilSettled, so
// that the failures a block showed are the ones the loop knows of,
// whatever tool lists the agent's runs had. m.mu is held.
func (m *Middleware) baseLocked(ctx context.Context) (*middleware.Kit, error) {
	if m.prepErr != nil {
		return nil, m.prepErr
	}
	if m.base != nil {
		return m.base, nil
	}
	if m.cfg.named && m.claim == nil {
		claim, err := middleware.ClaimOwner(m.sup, m.owner.ID())
		if err != nil {
			return nil, fmt.Errorf("eino: owner %q: another live coordinator has it on this engine; release it first: %w", m.owner.ID(), err)
		}
		m.claim = claim
	}
	if m.cfg.pool != nil {
		if err := m.sup.SetPool(ctx, m.owner, *m.cfg.pool); err != nil {
			m.claim.Release()
			m.claim = nil
			return nil, err
		}
	}
	base, err := middleware.PrepareContext(ctx, m.sup, m.owner, nil)
	if err != nil {
		m.claim.Release()
		m.claim = nil
		return nil, err
	}
	m.base = base
	m.sets = append(m.sets, base)
	return base, nil
}

// build prepares ts for owner: children become middleware entries,
// ordinary tools pass through (their names checked against the work
// tool), and the prepared list keeps the agent's order, the work tool
// last.
func (m *Middleware) build(ctx context.Context, owner work.Owner, ts []tool.BaseTool) (*prepared, error) {
	entries := make(map[string]any, len(ts))
	infos := make(map[string]observe.TargetInfo, len(ts))
	names := make([]string, len(ts))
	seen := make(map[string]bool, len(ts))
	extra := append([]string(nil), m.cfg.extraNames...)
	for i, t := range ts {
		if t == nil || isNil(t) {
			return nil, fmt.Errorf("%w: tool %d is nil (%T)", ErrInvalidTool, i, t)
		}
		info, err := t.Info(ctx)
		if err != nil || info == nil {
			return nil, fmt.Errorf("%w: tool %d (%T): Info: %v", ErrInvalidTool, i, t, err)
		}
		name := info.Name
		if seen[name] {
			return nil, fmt.Errorf("%w: two tools are named %q", ErrInvalidTool, name)
		}
		seen[name], names[i] = true, name
		switch v := t.(type) {
		case *Child:
			if err := v.check(); err != nil {
				return nil, err
			}
			entries[name] = v.c
			infos[name] = v.targetInfo()
		case BackgroundChild:
			if v.b == nil {
				return nil, ErrZeroChild
			}
			if v.b.err != nil {
				return nil, v.b.err
			}
			entries[name] = v.b.bg
			infos[name] = v.b.info
		default:
			extra = append(extra, name)
		}
	}
	set, err := middleware.PrepareWith(ctx, m.sup, owner, entries,
		append([]middleware.Option{middleware.WithExtraTools(extra...)}, m.cfg.mw...)...)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]middleware.Tool)
	for _, t := range set.Tools() {
		byName[t.Name()] = t
	}
	out := make([]tool.BaseTool, 0, len(ts)+1)
	for i, t := range ts {
		pt, ok := byName[names[i]]
		if !ok {
			out = append(out, t)
			continue
		}
		et, err := newTool(pt, infos[names[i]])
		if err != nil {
			return nil, err
		}
		et.traced = m.cfg.traced
		out = append(out, et)
	}
	if set.HasWork() {
		et, err := newTool(byName[middleware.WorkToolName], observe.TargetInfo{})
		if err != nil {
			return nil, err
		}
		et.traced = m.cfg.traced
		out = append(out, et)
	}
	return &prepared{set: set, tools: out, src: append([]tool.BaseTool(nil), ts...)}, nil
}

// sameTools reports whether two tool lists hold the same tools in the same
// order (comparable tools by value, others never equal).
func sameTools(a, b []tool.BaseTool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == nil || b[i] == nil || !reflect.TypeOf(a[i]).Comparable() || !reflect.TypeOf(b[i]).Comparable() {
			return false
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isNil reports whether v holds a typed nil.
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
