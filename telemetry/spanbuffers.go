package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// maxScratchAttrs is how many attributes a scratch holds: more than any
// one span start (at most 7) or span event (at most 5) of the Observer.
const maxScratchAttrs = 8

// scratch holds the attributes and options of one span start, span event
// or End call. The trace API copies them before the call returns: a
// provider can read options only through trace.NewSpanStartConfig,
// NewEventConfig and NewSpanEndConfig (their methods are unexported), which
// append the attributes and links to slices of their own. So a scratch
// goes back to its pool as soon as the call returns, and the hot path
// allocates neither the slices nor the boxed WithAttributes and WithLinks
// options (each an allocation per call). SetAttributes is not given a
// scratch: nothing obliges a Span implementation to copy its arguments.
type scratch struct {
	attrs [maxScratchAttrs]attribute.KeyValue
	// withAttrs[n] is trace.WithAttributes(attrs[:n]...), boxed on first
	// use.
	withAttrs [maxScratchAttrs + 1]trace.SpanStartEventOption
	link      [1]trace.Link
	withLink  trace.SpanStartOption // trace.WithLinks(link[:]...), made on first use
	start     [5]trace.SpanStartOption
	event     [2]trace.EventOption
	end       [1]trace.SpanEndOption
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// put returns s to the pool. It is not cleared: clearing its pointers
// costs a write barrier each while the GC runs, on every call of the hot
// path, and what it keeps until its next use (ids, target labels, a span
// context, never content) is bounded by the pool, which drops it at the
// second GC.
func (s *scratch) put() { scratchPool.Put(s) }

// attributes returns the empty attribute slice to fill (up to
// maxScratchAttrs).
func (s *scratch) attributes() []attribute.KeyValue { return s.attrs[:0] }

// withAttributes returns trace.WithAttributes(a...): the option boxed once
// when a is a prefix of s.attrs (as attributes returns it, not grown past
// its capacity), a new one otherwise.
func (s *scratch) withAttributes(a []attribute.KeyValue) trace.SpanStartEventOption {
	n := len(a)
	if n > 0 && (n > maxScratchAttrs || &a[0] != &s.attrs[0]) {
		return trace.WithAttributes(a...)
	}
	if s.withAttrs[n] == nil {
		s.withAttrs[n] = trace.WithAttributes(s.attrs[:n]...)
	}
	return s.withAttrs[n]
}

// withLinkTo returns trace.WithLinks(trace.Link{SpanContext: sc}).
func (s *scratch) withLinkTo(sc trace.SpanContext) trace.SpanStartOption {
	s.link[0] = trace.Link{SpanContext: sc}
	if s.withLink == nil {
		s.withLink = trace.WithLinks(s.link[:]...)
	}
	return s.withLink
}
