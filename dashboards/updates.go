package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// updatesRowY is where the row of children that talk back starts: below
// the jobs and approvals row.
const updatesRowY = waitsRowY + 9

// withUpdatesRow adds the row of children that talk back: the updates
// running children report (accepted or refused, by reason) and their
// sizes. Counts and sizes only: an update's value never reaches a metric.
//
//lint:ignore SA1019 the generator writes Grafana's v1 dashboard JSON, which the provisioning in README.md loads; v2 is a migration of its own
func withUpdatesRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	y := uint32(updatesRowY)
	return b.WithRow(row("Updates from children", y)).
		WithPanel(ts("Updates by outcome", units.OpsPerSecond,
			"Updates running children reported per second, by target and outcome (agentwork_work_updates_total): accepted, or the reason it was refused before it was accepted: "+
				"count or bytes (over the Work's bounds, 32 updates and 16 KiB by default: work.UpdatePolicy), ending (the Work was being cancelled or settling), conflict (a key reused with another payload), invalid (an empty key or a payload that is not JSON), not_declared (the target declares no updates). "+
				"A child keeps running after a refusal. Steady count or bytes refusals mean the child reports more than its policy allows: raise the bounds (up to their ceilings) or tell the child to report less often; not_declared means a child reports without declaring updates; conflict or invalid point at the child's tool calls. "+
				"The updates themselves are read by the application (the Engine's Updates, by cursor), never here; each is an agentwork.work.update event on the Work's invoke_agent span in Jaeger (its sequence, size and whether it is a question).",
			pos(0, y+1, 12, 8),
			query("A", `sum by (target, outcome) (rate(agentwork_work_updates_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} {{outcome}}"))).
		WithPanel(ts("Update size", units.BytesIEC,
			"p50 and p95 of the encoded size of accepted updates, by target (agentwork_work_update_bytes; sizes only, never content). "+
				"Updates near the Work's byte bound (16 KiB in all by default) use it up in a few updates, and later ones are refused with reason bytes: have the child report a short summary and keep detail for its result.",
			pos(12, y+1, 12, 8),
			query("A", quantile("0.5", "agentwork_work_update_bytes", "target, le"), "{{target}} p50"),
			query("B", quantile("0.95", "agentwork_work_update_bytes", "target, le"), "{{target}} p95")))
}
