package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// OverviewUID is the stable Grafana UID of the overview dashboard. Links and
// provisioning refer to it, so it never changes.
const OverviewUID = "agentwork-overview"

// OverviewFile is the overview dashboard's path, relative to this module's
// root, where the generator writes it and where it is committed.
const OverviewFile = "grafana/agentwork-overview.json"

// procSel is the label matcher every query uses: the job and instance
// variables. They are multi-valued with an "All" value of ".*", so a regex
// match is always right.
const procSel = `job=~"$job", instance=~"$instance"`

// targetSel is the label matcher every per-target query uses: the process
// matchers and the target variable (multi-valued, "All" = ".*").
const targetSel = procSel + `, target=~"$target"`

// ds is the panel and query data source: whatever Prometheus the user picks in
// the dashboard's data-source variable.
func ds() common.DataSourceRef {
	typ, uid := "prometheus", "${datasource}"
	return common.DataSourceRef{Type: &typ, Uid: &uid}
}

// pos is an explicit grid position. Every panel gets one: the SDK's automatic
// layout can run past the 24-column grid.
func pos(x, y, w, h uint32) dashboard.GridPos {
	return dashboard.GridPos{X: x, Y: y, W: w, H: h}
}

func query(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(ds()).
		RefId(ref).
		Expr(expr).
		LegendFormat(legend).
		Range()
}

func quantile(q, metric, by string) string {
	return fmt.Sprintf(`histogram_quantile(%s, sum by (%s) (rate(%s_bucket%s[$__rate_interval])))`, q, by, metric, sel(metric))
}

// sel returns the label selector used for a metric: per-target metrics follow
// the target variable, the others take everything.
func sel(metric string) string {
	switch metric {
	case "agentwork_work_duration_seconds", "agentwork_work_queue_wait_seconds", "agentwork_work_result_bytes",
		"agentwork_work_update_bytes":
		return "{" + targetSel + "}"
	}
	return "{" + procSel + "}"
}

func ts(title, unit, desc string, gp dashboard.GridPos, targets ...cog.Builder[variants.Dataquery]) *timeseries.PanelBuilder {
	b := timeseries.NewPanelBuilder().
		Title(title).
		Description(desc).
		Datasource(ds()).
		Unit(unit).
		Min(0).
		FillOpacity(10).
		LineWidth(1).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true)).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending)).
		GridPos(gp)
	for _, t := range targets {
		b = b.WithTarget(t)
	}
	return b
}

// bars is a horizontal bar gauge of the last value of instant queries.
func bars(title, desc string, gp dashboard.GridPos, targets ...cog.Builder[variants.Dataquery]) *bargauge.PanelBuilder {
	b := bargauge.NewPanelBuilder().
		Title(title).
		Description(desc).
		Datasource(ds()).
		Unit(units.Short).
		Min(0).
		DisplayMode(common.BarGaugeDisplayModeBasic).
		Orientation(common.VizOrientationHorizontal).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		GridPos(gp)
	for _, t := range targets {
		b = b.WithTarget(t)
	}
	return b
}

// instant is an instant query (for bars).
func instant(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(ds()).
		RefId(ref).
		Expr(expr).
		LegendFormat(legend).
		Instant()
}

func row(title string, y uint32) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder(title).GridPos(pos(0, y, 24, 1))
}

// Overview builds the agentwork overview dashboard: what Work there is now,
// its lifecycle rates, latencies and sizes, how the model uses the `work`
// tool, guidance and the status block, and what children spend against
// their budgets and what a shutdown abandoned.
//
//lint:ignore SA1019 the generator writes Grafana's v1 dashboard JSON, which the provisioning in README.md loads; v2 is a migration of its own
func Overview() (dashboard.Dashboard, error) {
	datasource := dashboard.NewDatasourceVariableBuilder("datasource").
		Label("Data source").
		Description("The Prometheus that scrapes the agentwork process.").
		Type("prometheus")

	labelVar := func(name, label, desc, q string) *dashboard.QueryVariableBuilder {
		return dashboard.NewQueryVariableBuilder(name).
			Label(label).
			Description(desc).
			Datasource(ds()).
			Query(dashboard.StringOrMap{String: &q}).
			Definition(q).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true).
			AllValue(".*")
	}
	job := labelVar("job", "Job", "Prometheus jobs that scrape agentwork processes.",
		"label_values(agentwork_work_concurrency_limit, job)")
	instance := labelVar("instance", "Instance", "Scraped agentwork processes in the selected jobs.",
		`label_values(agentwork_work_concurrency_limit{job=~"$job"}, instance)`)
	q := "label_values(agentwork_work_items, target)"
	target := dashboard.NewQueryVariableBuilder("target").
		Label("Target").
		Description("Work targets (the label of the backgroundable tool or child agent).").
		Datasource(ds()).
		Query(dashboard.StringOrMap{String: &q}).
		Definition(q).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".*")

	//lint:ignore SA1019 the generator writes Grafana's v1 dashboard JSON, which the provisioning in README.md loads; v2 is a migration of its own
	b := dashboard.NewDashboardBuilder("agentwork overview").
		Uid(OverviewUID).
		Description("Backgroundable agent work: what is running now, lifecycle rates, latency, and how the model uses the work tool. Generated by github.com/agentwork/agentwork/dashboards; do not edit by hand.").
		Tags([]string{"agentwork"}).
		Editable().
		Refresh("10s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasource).
		WithVariable(job).
		WithVariable(instance).
		WithVariable(target)

	// Row: now.
	b = b.WithRow(row("Now", 0)).
		WithPanel(bars("Retained work by state (registry, not totals)", "Work items in the process-local registry by state, for the selected targets (agentwork_work_items). "+
			"queued, running and cancel-requested are exact live counts. completed, failed and cancelled count only the finished work still retained for its owner (64 per owner by default, and detached work is forgotten at once): they are not totals, see \"Finished work\" for those. "+
			"If queued keeps growing the running slots are all taken: compare \"Slots in use vs limit\" and the oldest-queued panel. "+
			"If cancel-requested stays above zero a child is not honouring cooperative cancellation: see the oldest cancel-requested panel and the live status page (/statusz).",
			pos(0, 1, 6, 8),
			instant("A", `sum by (state) (agentwork_work_items{`+targetSel+`})`, "{{state}}"))).
		WithPanel(bars("Finished work (totals in range)", "Work that reached each terminal state during the dashboard's time range, for the selected targets: totals from the counter agentwork_work_transitions_total (increase over the range), unlike the retained registry counts. "+
			"A failed or cancelled share that grows means children fail or the model abandons work: open the Failures and Cancels panels.",
			pos(6, 1, 6, 8),
			instant("A", `sum by (state) (round(increase(agentwork_work_transitions_total{state=~"completed|failed|cancelled", `+targetSel+`}[$__range])))`, "{{state}}"))).
		WithPanel(ts("Slots in use vs limit", units.Short,
			"Running slots in use (running plus cancel-requested work: a cancel-requested item keeps its slot until its child returns) against the concurrency limit, per process and target, and queued work per target (agentwork_work_slots_in_use, agentwork_work_concurrency_limit, agentwork_work_items{state=\"queued\"}; not filtered by target because a limit may be shared). "+
				"A limit with target \"*\" is shared by all of a process's targets (an in-process engine's: compare it with that process's slots summed); any other limit is its target's own on one Temporal worker (compare it with that worker's slots of the target; the queue is the deployment's, from its coordinator). "+
				"Slots pinned at the limit with work queued means the queue is blocked: AgentworkAtConcurrencyLimit fires; find what holds the slots on the status page (/statusz). "+
				"A limit of 0 or no limit series means the engine was built without one or the process is not scraped: check the Prometheus target.",
			pos(12, 1, 6, 8),
			query("A", `sum by (instance, target) (agentwork_work_slots_in_use{`+procSel+`})`, "{{instance}} {{target}} slots in use"),
			query("B", `max by (instance, target) (agentwork_work_concurrency_limit{`+procSel+`})`, "{{instance}} {{target}} limit"),
			query("C", `sum by (target) (agentwork_work_items{state="queued", `+procSel+`})`, "{{target}} queued"))).
		WithPanel(ts("Refused starts", units.OpsPerSecond,
			"Starts the engine refused before any work was queued, by target and reason, per second (agentwork_work_starts_refused_total). "+
				"Anything above zero means the model asked for work the policy would not accept: read the reason label; for a limit or budget reason raise the limit or tell the model about it in the prompt, for a validation reason fix the tool schema or the prompt.",
			pos(18, 1, 6, 8),
			query("A", `sum by (target, reason) (rate(agentwork_work_starts_refused_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} {{reason}}")))

	// Row: waiting.
	b = b.WithRow(row("Waiting", 9)).
		WithPanel(ts("Oldest queued work age", units.Seconds,
			"Age of the oldest queued work item by target (agentwork_work_oldest_queued_age_seconds; 0 when nothing waits). "+
				"It grows while the queue is stuck, even before anything leaves it. Above 5 minutes AgentworkQueuedWorkWaiting fires: check \"Slots in use vs limit\" and the status page (/statusz) for what holds the slots.",
			pos(0, 10, 12, 8),
			query("A", `max by (target) (agentwork_work_oldest_queued_age_seconds{`+targetSel+`})`, "{{target}}"))).
		WithPanel(ts("Oldest cancel-requested work age", units.Seconds,
			"How long the oldest cancel-requested work item by target has been waiting for its child to stop (agentwork_work_oldest_cancel_requested_age_seconds; 0 when none). "+
				"It measures one and the same item, so a steady climb means one child ignores cancellation; above 10 minutes AgentworkWorkStuckCancelRequested fires. Find the item on the status page (/statusz): its invoke_agent span is not in Jaeger until it ends.",
			pos(12, 10, 12, 8),
			query("A", `max by (target) (agentwork_work_oldest_cancel_requested_age_seconds{`+targetSel+`})`, "{{target}}")))

	// Row: lifecycle.
	transition := func(state string) string {
		return `sum by (target) (rate(agentwork_work_transitions_total{state="` + state + `", ` + targetSel + `}[$__rate_interval]))`
	}
	b = b.WithRow(row("Lifecycle", 18)).
		WithPanel(ts("Starts", units.OpsPerSecond,
			"Work accepted and queued per second by target (agentwork_work_transitions_total{state=\"queued\"}). "+
				"A sudden rise with no matching rise in completions means work piles up: check \"Retained work by state\" and \"Oldest queued work age\". Zero while the app is busy means the model stopped using run_in_background: check the tool description the model sees.",
			pos(0, 19, 6, 8), query("A", transition("queued"), "{{target}}"))).
		WithPanel(ts("Completions", units.OpsPerSecond,
			"Work that completed per second by target (agentwork_work_transitions_total{state=\"completed\"}). "+
				"If it falls well below Starts for long, work is failing, being cancelled or stuck: compare the Failures and Cancels panels and the durations.",
			pos(6, 19, 6, 8), query("A", transition("completed"), "{{target}}"))).
		WithPanel(ts("Failures", units.OpsPerSecond,
			"Work that failed per second by target (agentwork_work_transitions_total{state=\"failed\"}). "+
				"Any sustained rate deserves a look: open the invoke_agent spans for the target in Jaeger and read error.type (failure text is never exported), then check the child's provider, tools and timeouts. The AgentworkWorkFailureRatioHigh alert fires on the ratio.",
			pos(12, 19, 6, 8), query("A", transition("failed"), "{{target}}"))).
		WithPanel(ts("Cancels", units.OpsPerSecond,
			"Work cancelled per second by target (agentwork_work_transitions_total{state=\"cancelled\"}). "+
				"Many cancels mean the model starts work it then abandons: tighten the prompt or tool description; cancels that lag far behind cancel requests mean children ignore cooperative cancellation.",
			pos(18, 19, 6, 8), query("A", transition("cancelled"), "{{target}}")))

	// Row: latency and size.
	b = b.WithRow(row("Latency and size", 27)).
		WithPanel(ts("Work duration", units.Seconds,
			"p50, p95 and p99 of how long work ran, from start to its terminal state, by target (agentwork_work_duration_seconds). "+
				"A p99 far above p50 points at a slow provider or a tool that hangs: open the slowest invoke_agent traces in Jaeger. Durations near a timeout mean the timeout, not the work, decides the outcome.",
			pos(0, 28, 8, 8),
			query("A", quantile("0.5", "agentwork_work_duration_seconds", "target, le"), "{{target}} p50"),
			query("B", quantile("0.95", "agentwork_work_duration_seconds", "target, le"), "{{target}} p95"),
			query("C", quantile("0.99", "agentwork_work_duration_seconds", "target, le"), "{{target}} p99"))).
		WithPanel(ts("Queue wait", units.Seconds,
			"p50, p95 and p99 of the time work spent queued before it started running, by target (agentwork_work_queue_wait_seconds). "+
				"Anything but near zero means the concurrency limit is the bottleneck: check \"Slots in use vs limit\" and raise the limit or shorten the work. It records only when work leaves the queue: for a queue that does not move see \"Oldest queued work age\".",
			pos(8, 28, 8, 8),
			query("A", quantile("0.5", "agentwork_work_queue_wait_seconds", "target, le"), "{{target}} p50"),
			query("B", quantile("0.95", "agentwork_work_queue_wait_seconds", "target, le"), "{{target}} p95"),
			query("C", quantile("0.99", "agentwork_work_queue_wait_seconds", "target, le"), "{{target}} p99"))).
		WithPanel(ts("Result size", units.BytesIEC,
			"p50 and p95 of the size of completed results by target (agentwork_work_result_bytes; sizes only, never content). "+
				"Results that grow large cost the coordinator context tokens when it reads them: ask the child for a summary, or cap its output.",
			pos(16, 28, 8, 8),
			query("A", quantile("0.5", "agentwork_work_result_bytes", "target, le"), "{{target}} p50"),
			query("B", quantile("0.95", "agentwork_work_result_bytes", "target, le"), "{{target}} p95")))

	// Row: how the model uses it.
	b = b.WithRow(row("Model interaction", 36)).
		WithPanel(ts("work tool actions", units.OpsPerSecond,
			"Calls of the work tool per second by action and outcome (agentwork_work_actions_total; all targets). "+
				"A growing share of unsuccessful outcomes (such as not found or invalid input) means the model sends bad input or stale ids: check the tool description and the status block it sees. A high rate of result calls that time out means the model polls instead of working: tell it to keep working and read results later.",
			pos(0, 37, 8, 8),
			query("A", `sum by (action, outcome) (rate(agentwork_work_actions_total{`+procSel+`}[$__rate_interval]))`, "{{action}} {{outcome}}"))).
		WithPanel(ts("Guidance accepted vs delivered", units.OpsPerSecond,
			"Guidance messages sent to running work per second: accepted by the work tool's send action, and delivered at the child's next model-request boundary (agentwork_guidance_messages_total by event). "+
				"Delivered lagging accepted for long means children make few model requests, or finish before reading their guidance: that is expected for short work; for long work check the child is an agent wrapped by the langchaingo adapter.",
			pos(8, 37, 8, 8),
			query("A", `sum by (event) (rate(agentwork_guidance_messages_total{`+procSel+`}[$__rate_interval]))`, "{{event}}"))).
		WithPanel(ts("Status block rows", units.Short,
			"Rows in the status block prepended to the coordinator's model requests: p50, p95 and mean (agentwork_status_block_rows; capped at 12). "+
				"Sitting at the cap means the coordinator has more visible work than it can see: have it detach or read finished work, or lower how much it starts.",
			pos(16, 37, 8, 8),
			query("A", quantile("0.5", "agentwork_status_block_rows", "le"), "p50"),
			query("B", quantile("0.95", "agentwork_status_block_rows", "le"), "p95"),
			query("C", `sum(rate(agentwork_status_block_rows_sum{`+procSel+`}[$__rate_interval])) / sum(rate(agentwork_status_block_rows_count{`+procSel+`}[$__rate_interval]))`, "mean")))

	// Row: budgets and shutdown.
	b = b.WithRow(row("Budgets and shutdown", 45)).
		WithPanel(ts("Budget exhaustion", units.OpsPerSecond,
			"Child runs whose budget ran out per second, by target and budget (agentwork_work_budget_exhausted_total; budget is turns, tool_calls, tokens or duration). "+
				"A turns, tool_calls or tokens exhaustion gives the child one final request without tools, and its answer is a partial result (or a budget_exhausted failure when it was started to fail on exhaustion); duration is its deadline, and the Work fails with deadline_exceeded. "+
				"A target that runs out on most runs has a budget too small for its task, or loops: compare \"Turns and tool calls\" and open its invoke_agent spans in Jaeger (agentwork.work.budget, agentwork.work.turns), then raise its budget (lc.WithBudget, work.WithDefaultBudget) or narrow the task.",
			pos(0, 46, 8, 8),
			query("A", `sum by (target, budget) (rate(agentwork_work_budget_exhausted_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} {{budget}}"))).
		WithPanel(ts("Tokens spent", units.Short,
			"Tokens per second that child runs spent, by target and type (input or output), as their providers reported them when each run ended (agentwork_work_tokens_total). "+
				"This is what the background work costs; a target whose rate climbs without more starts spends more per run: check its prompts and results. "+
				"Responses without usage are not counted here (the span attribute agentwork.work.usage_unknown counts them): a target at zero while it runs has a provider that reports no usage, and a token budget cannot be enforced for it.",
			pos(8, 46, 8, 8),
			query("A", `sum by (target, type) (rate(agentwork_work_tokens_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} {{type}}"))).
		WithPanel(ts("Turns and tool calls", units.OpsPerSecond,
			"Model requests (turns) and tool calls per second that child runs made, by target, counted when each run ends (agentwork_work_turns_total, agentwork_work_tool_calls_total). "+
				"Divide by \"Completions\" for the cost per run. A rise per run means the children loop or the task grew: read a long run's invoke_agent span in Jaeger (agentwork.work.turns, agentwork.work.tool_calls) and tighten the child's prompt, its tools or its budget.",
			pos(16, 46, 8, 8),
			query("A", `sum by (target) (rate(agentwork_work_turns_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} turns"),
			query("B", `sum by (target) (rate(agentwork_work_tool_calls_total{`+targetSel+`}[$__rate_interval]))`, "{{target}} tool calls"))).
		WithPanel(ts("Budget pools: reserved vs remaining", units.Short,
			"What the owners' budget pools hold per process and budget (turns, tool_calls, tokens), summed over their pools: reserved by children that have not settled yet, and what the pools can still give (agentwork_budget_pool_reserved, agentwork_budget_pool_remaining; not filtered by target: a pool belongs to an owner). "+
				"No series means no owner has a pool (lc.WithPool, Engine.SetPool). Remaining near zero means new starts of that owner fail with budget_exhausted (see \"Refused starts\", reason budget_exhausted): raise the pool, give children smaller budgets, or release finished owners. "+
				"Reserved high while little is spent means children reserve more than they use: lower their budgets.",
			pos(0, 54, 12, 8),
			query("A", `sum by (instance, budget) (agentwork_budget_pool_reserved{`+procSel+`})`, "{{instance}} {{budget}} reserved"),
			query("B", `sum by (instance, budget) (agentwork_budget_pool_remaining{`+procSel+`})`, "{{instance}} {{budget}} remaining"))).
		WithPanel(bars("Orphaned at shutdown", "Work an in-process engine's Shutdown abandoned, by target (agentwork_work_orphaned_total): cancelled, its child had not returned within the shutdown grace, so the child ignores cooperative cancellation and its goroutine runs on. "+
			"\"in range\" is the increase over the dashboard's time range; it misses a target's first orphan in a process, whose series starts at 1, which \"since start\" shows: the count of the live processes since they started. "+
			"Anything above zero fires AgentworkWorkOrphaned: read the process's WARN line \"work engine shut down\" and fix the child to return when its context is cancelled. Orphans at exit show only if Prometheus scraped the process after its Shutdown.",
			pos(12, 54, 12, 8),
			instant("A", `sum by (target) (round(increase(agentwork_work_orphaned_total{`+targetSel+`}[$__range])))`, "{{target}} in range"),
			instant("B", `sum by (target) (agentwork_work_orphaned_total{`+targetSel+`})`, "{{target}} since start")))

	// Row: jobs and approvals (waits.go).
	b = withWaitsRow(b)
	// Row: updates from children (updates.go).
	b = withUpdatesRow(b)
	// Row: calls moved to the background (backgrounded.go).
	b = withMovesRow(b)

	d, err := b.Build()
	if err != nil {
		return d, err
	}
	// Stable, unique panel ids in layout order (Grafana needs them unique
	// within a dashboard; the SDK leaves them unset).
	for i := range d.Panels {
		id := uint32(i + 1)
		switch p := d.Panels[i]; {
		case p.Panel != nil:
			p.Panel.Id = &id
		case p.RowPanel != nil:
			p.RowPanel.Id = id
		}
	}
	return d, nil
}

// OverviewJSON returns the overview dashboard as indented JSON with a trailing
// newline: exactly the bytes of the committed OverviewFile.
func OverviewJSON() ([]byte, error) {
	d, err := Overview()
	if err != nil {
		return nil, fmt.Errorf("build overview dashboard: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encode overview dashboard: %w", err)
	}
	return buf.Bytes(), nil
}
