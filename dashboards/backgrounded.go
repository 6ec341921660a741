package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// movesRowY is where the row of calls that moved to the background by
// themselves starts: below the updates row.
const movesRowY = updatesRowY + 9

// withMovesRow adds the row of the auto-background option: child calls
// made without run_in_background that were still unfinished at their bound
// and returned a work.ref.
//
//lint:ignore SA1019 the generator writes Grafana's v1 dashboard JSON, which the provisioning in README.md loads; v2 is a migration of its own
func withMovesRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	y := uint32(movesRowY)
	return b.WithRow(row("Moved to the background", y)).
		WithPanel(ts("Calls moved to the background", units.OpsPerSecond,
			"Child calls per second, by target, made without run_in_background on a child with an auto-background bound (lc.WithAutoBackground), that were still queued or running at the bound and returned a work.ref instead of the output (agentwork_work_backgrounded_total). "+
				"Compare with \"Starts\": a target whose calls nearly all move has a bound shorter than its usual run, so the coordinator waits the bound and then follows the work anyway: lower the bound, or launch it with run_in_background; one whose calls never move could do without the option. "+
				"Each move is an agentwork.work.backgrounded event on the Work's invoke_agent span in Jaeger (the state it moved in).",
			pos(0, y+1, 24, 8),
			query("A", `sum by (target) (rate(agentwork_work_backgrounded_total{`+targetSel+`}[$__rate_interval]))`, "{{target}}")))
}
