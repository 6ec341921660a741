package telemetry

import (
	"context"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work/observe"
)

// Budget telemetry: names are public API like the rest (DESIGN.md).
const (
	// evBudgetExhausted is the span event of observe.EventBudgetExhausted.
	evBudgetExhausted = "agentwork.work.budget_exhausted"

	keyBudget       = attribute.Key("agentwork.work.budget")
	keyInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	keyTurns        = attribute.Key("agentwork.work.turns")
	keyToolCalls    = attribute.Key("agentwork.work.tool_calls")
	keyUnknownUsage = attribute.Key("agentwork.work.usage_unknown")

	metricBudgetExhausted = "agentwork.work.budget_exhausted" // agentwork_work_budget_exhausted_total
	metricTokens          = "agentwork.work.tokens"           // agentwork_work_tokens_total
	metricTurns           = "agentwork.work.turns"            // agentwork_work_turns_total
	metricToolCalls       = "agentwork.work.tool_calls"       // agentwork_work_tool_calls_total
	metricPoolReserved    = "agentwork.budget.pool.reserved"  // agentwork_budget_pool_reserved
	metricPoolRemaining   = "agentwork.budget.pool.remaining" // agentwork_budget_pool_remaining
	// unitPool is the pool gauges' unit: an annotation (a count of turns,
	// tool calls or tokens, by the budget label). The unit "1" would make
	// the Prometheus exporter append _ratio to their names.
	unitPool       = "{count}"
	labelBudget    = attribute.Key("budget") // turns | tool_calls | tokens | duration
	labelTokenType = attribute.Key("type")   // input | output
	logBudget      = "budget"
	otherBudget    = otherErrorType
)

// budgetName returns b when it is one of the four budget names, else
// "_OTHER": only a bounded set reaches a label.
func budgetName(b string) string {
	switch b {
	case observe.BudgetTurns, observe.BudgetToolCalls, observe.BudgetTokens, observe.BudgetDuration:
		return b
	}
	return otherBudget
}

// budgetInstruments are the budget metrics.
type budgetInstruments struct {
	exhausted, tokens, turns, toolCalls metric.Int64Counter
	reserved, remaining                 metric.Int64ObservableGauge
	reg                                 metric.Registration
}

func newBudgetInstruments(m metric.Meter, o *Observer) (*budgetInstruments, error) {
	var (
		b      budgetInstruments
		err, e error
	)
	b.exhausted, e = m.Int64Counter(metricBudgetExhausted, metric.WithUnit("{work}"),
		metric.WithDescription("Child runs whose budget ran out, by target and budget (turns, tool_calls, tokens or duration)."))
	err = errors.Join(err, e)
	b.tokens, e = m.Int64Counter(metricTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens child runs spent as their providers reported them, by target and type (input or output)."))
	err = errors.Join(err, e)
	b.turns, e = m.Int64Counter(metricTurns, metric.WithUnit("{request}"),
		metric.WithDescription("Model requests (turns) child runs made, by target."))
	err = errors.Join(err, e)
	b.toolCalls, e = m.Int64Counter(metricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls child runs made, by target."))
	err = errors.Join(err, e)
	b.reserved, e = m.Int64ObservableGauge(metricPoolReserved, metric.WithUnit(unitPool),
		metric.WithDescription("What unsettled children reserved from their owners' pools, summed over the watched engines, by budget."))
	err = errors.Join(err, e)
	b.remaining, e = m.Int64ObservableGauge(metricPoolRemaining, metric.WithUnit(unitPool),
		metric.WithDescription("What the owners' pools can still give, summed over the watched engines, by budget."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	b.reg, err = m.RegisterCallback(func(ctx context.Context, ob metric.Observer) error {
		for _, snap := range o.answered(ctx) {
			for _, p := range snap.Pools {
				set := metric.WithAttributeSet(attribute.NewSet(labelBudget.String(budgetName(p.Budget))))
				ob.ObserveInt64(b.reserved, p.Reserved, set)
				ob.ObserveInt64(b.remaining, p.Remaining, set)
			}
		}
		return nil
	}, b.reserved, b.remaining)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// budgetEvent records EventBudgetExhausted and EventUsage and reports
// whether e was one of them.
//
//   - EventBudgetExhausted: the span event "agentwork.work.budget_exhausted"
//     and the span attribute agentwork.work.budget on the run's span (the
//     Work's invoke_agent span, or a foreground call's), the counter
//     agentwork_work_budget_exhausted_total{target,budget}, and a Warn
//     line "agentwork.work.budget_exhausted" (work.id, work.target,
//     budget, owner.depth).
//   - EventUsage: gen_ai.usage.input_tokens and gen_ai.usage.output_tokens
//     (when any response reported usage), agentwork.work.turns,
//     agentwork.work.tool_calls and agentwork.work.usage_unknown (responses
//     without usage, when any) on the run's span, and the counters
//     agentwork_work_tokens_total{target,type},
//     agentwork_work_turns_total{target} and
//     agentwork_work_tool_calls_total{target}.
func (o *Observer) budgetEvent(ctx context.Context, e observe.Event) bool {
	switch e.Type {
	case observe.EventBudgetExhausted:
		budget := budgetName(e.Budget)
		o.budgetSpan(ctx, e)
		if o.bud != nil {
			o.bud.exhausted.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
				labelTarget.String(e.Target), labelBudget.String(budget))))
		}
		if o.log.Enabled(ctx, slog.LevelWarn) {
			attrs := make([]slog.Attr, 0, 6)
			if e.WorkID != "" {
				attrs = append(attrs, slog.String(logWorkID, e.WorkID))
			}
			attrs = append(attrs, slog.String(logTarget, e.Target), slog.String(logBudget, budget), slog.Int(logOwnerDepth, e.Depth))
			o.log.LogAttrs(ctx, slog.LevelWarn, evBudgetExhausted, appendTrace(attrs, ctx)...)
		}
		return true
	case observe.EventUsage:
		u := e.Usage
		o.budgetSpan(ctx, e)
		if b := o.bud; b != nil {
			target := labelTarget.String(e.Target)
			if u.InputTokens > 0 {
				b.tokens.Add(ctx, u.InputTokens, metric.WithAttributeSet(attribute.NewSet(target, labelTokenType.String("input"))))
			}
			if u.OutputTokens > 0 {
				b.tokens.Add(ctx, u.OutputTokens, metric.WithAttributeSet(attribute.NewSet(target, labelTokenType.String("output"))))
			}
			set := metric.WithAttributeSet(attribute.NewSet(target))
			if u.Turns > 0 {
				b.turns.Add(ctx, int64(u.Turns), set)
			}
			if u.ToolCalls > 0 {
				b.toolCalls.Add(ctx, int64(u.ToolCalls), set)
			}
		}
		return true
	}
	return false
}

// budgetSpan records a budget or usage event on the span in ctx, if it
// records: the part of budgetEvent that Replay repeats.
func (o *Observer) budgetSpan(ctx context.Context, e observe.Event) {
	if o.tracer == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	switch e.Type {
	case observe.EventBudgetExhausted:
		budget := budgetName(e.Budget)
		opts := []trace.EventOption{trace.WithAttributes(keyBudget.String(budget))}
		if !e.Time.IsZero() {
			opts = append(opts, trace.WithTimestamp(e.Time))
		}
		span.AddEvent(evBudgetExhausted, opts...)
		span.SetAttributes(keyBudget.String(budget))
	case observe.EventUsage:
		u := e.Usage
		attrs := make([]attribute.KeyValue, 0, 5)
		if u.UnknownUsage == 0 || u.Tokens() > 0 {
			attrs = append(attrs, keyInputTokens.Int64(u.InputTokens), keyOutputTokens.Int64(u.OutputTokens))
		}
		attrs = append(attrs, keyTurns.Int(u.Turns), keyToolCalls.Int(u.ToolCalls))
		if u.UnknownUsage > 0 {
			attrs = append(attrs, keyUnknownUsage.Int(u.UnknownUsage))
		}
		span.SetAttributes(attrs...)
	}
}
