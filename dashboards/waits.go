package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// waitsRowY is where the row of Work that waits starts: below the
// budgets and shutdown row.
const waitsRowY = 62

// withWaitsRow adds the row of Work that waits: external jobs waiting
// between polls (no goroutine, no running slot) and Work awaiting approval
// before it starts (queued, outside the dispatch queue).
//
//lint:ignore SA1019 the generator writes Grafana's v1 dashboard JSON, which the provisioning in README.md loads; v2 is a migration of its own
func withWaitsRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	y := uint32(waitsRowY)
	return b.WithRow(row("Jobs and approvals", y)).
		WithPanel(ts("Jobs waiting and work awaiting approval", units.Short,
			"External jobs waiting for their result between polls, and work awaiting approval before it starts, by target (agentwork_work_waiting, agentwork_work_awaiting_approval). "+
				"A waiting job is running to the model but holds no running slot (it is not in \"Slots in use vs limit\"); work awaiting approval is queued to the model but is not in the dispatch queue (it is not in \"Oldest queued work age\"). "+
				"Jobs waiting that only grow mean the external service does not finish them: check its own dashboard and \"Job polls by outcome\". Approvals that pile up mean nobody answers them: see \"Oldest approval request age\" and the process's status page (/statusz).",
			pos(0, y+1, 8, 8),
			query("A", `sum by (target) (agentwork_work_waiting{`+targetSel+`})`, "{{target}} jobs waiting"),
			query("B", `sum by (target) (agentwork_work_awaiting_approval{`+targetSel+`})`, "{{target}} awaiting approval"))).
		WithPanel(ts("Oldest approval request age", units.Seconds,
			"How long the oldest pending approval request of each target has waited for an answer (agentwork_work_oldest_approval_age_seconds; 0 when none). "+
				"Above 30 minutes AgentworkApprovalPending fires: the application's approver (the Engine's Pending, then Approve or Deny) is not answering. Unanswered requests end cancelled with class approval_timeout after their approval timeout (24 h by default).",
			pos(8, y+1, 8, 8),
			query("A", `max by (target) (agentwork_work_oldest_approval_age_seconds{`+targetSel+`})`, "{{target}}"))).
		WithPanel(ts("Job polls by outcome", units.OpsPerSecond,
			"Polls of external jobs per second, by target and outcome (agentwork_job_polls_total): waiting (not done yet, polled again after a backoff of 1 s doubling to 30 s), done, failed (the job failed for good) and error (a transient poll error: the poll is retried, and a few in a row fail the work). "+
				"A rate of waiting polls near the number of jobs waiting divided by 30 s means jobs sit at the backoff's cap: the service is slow, not broken. A rising error rate means the job's service or its Await is failing: check the service, then the invoke_agent spans' agentwork.work.polls event (polls by outcome) in Jaeger once the jobs end.",
			pos(16, y+1, 8, 8),
			query("A", `sum by (target, outcome) (rate(agentwork_job_polls_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} {{outcome}}")))
}
