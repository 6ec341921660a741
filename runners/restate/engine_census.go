package restate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

var _ observe.Watched = (*engine)(nil)

// liveCount is one group of live Work: a target, a state, and whether
// it is an external job waiting for its result or a Work awaiting its
// approval.
type liveCount struct {
	Label    string `json:"label"`
	State    string `json:"state"`
	Waiting  bool   `json:"waiting"`
	Awaiting bool   `json:"awaiting"`
	N        int    `json:"n"`
	// Oldest is the unix nanoseconds of the group's oldest queue entry:
	// when an approved Work was approved, else when Restate created the
	// Work's invocation; Asked of its oldest Work's creation (when a Work
	// awaiting approval asked for it).
	Oldest int64 `json:"oldest"`
	Asked  int64 `json:"asked"`
}

// liveRow is one live Work as the rows query returns it: identifiers,
// states and times only.
type liveRow struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Owner    string `json:"owner"`
	Depth    int    `json:"depth"`
	Kind     int    `json:"kind"`
	State    string `json:"state"`
	Attempt  int    `json:"attempt"`
	Created  string `json:"created"`
	Started  string `json:"started"`
	Enqueued string `json:"enqueued"`
	Detached bool   `json:"detached"`
	Waiting  bool   `json:"waiting"`
	Awaiting bool   `json:"awaiting"`
}

// liveFrom is the FROM and WHERE of the live Work: the namespace's Work
// workflow invocations not completed, with their control state not
// terminal. Its columns are read with json_get_* on the server.
func liveFrom(ns string) string {
	var live []string
	for _, s := range observe.States {
		if !s.Terminal() {
			live = append(live, sqlString(string(s)))
		}
	}
	return fmt.Sprintf(`FROM sys_invocation i JOIN state s ON s.service_key = i.target_service_key
WHERE starts_with(i.target_service_name, %s) AND i.target_handler_name = %s AND i.status <> 'completed'
AND s.service_name = %s AND s.key = %s AND json_get_str(s.value_utf8, 'State') IN (%s)`,
		sqlString(ns+"."+workService+"."), sqlString(hRun), sqlString(ns+"."+controlService), sqlString(stateKey),
		strings.Join(live, ", "))
}

// The columns read of a live Work's control state, on the server.
const (
	labelCol    = `json_get_str(s.value_utf8, 'In', 'Label')`
	stateCol    = `json_get_str(s.value_utf8, 'State')`
	waitingCol  = `COALESCE(json_get_bool(s.value_utf8, 'Waiting'), false)`
	awaitingCol = `COALESCE(json_get_bool(s.value_utf8, 'Awaiting'), false)`
)

// readDeployment reads the deployment view from Restate (see Snapshot).
func (e *engine) readDeployment(ctx context.Context) (observe.Snapshot, error) {
	if e.cfg.admin == "" {
		return observe.Snapshot{}, driver.Detail(work.ErrUnavailable, "no admin API (WithAdmin)")
	}
	admin := newIngress(e.cfg.admin, "", e.cfg.RPCTimeout, e.cfg.hc)
	from := liveFrom(e.cfg.ns)
	var counts []liveCount
	q := `SELECT label, state, waiting, awaiting, COUNT(*) AS n, MIN(since) AS oldest, MIN(asked) AS asked FROM (SELECT ` +
		labelCol + ` AS label, ` + stateCol + ` AS state, ` + waitingCol + ` AS waiting, ` + awaitingCol + ` AS awaiting,
COALESCE(CAST(CAST(json_get_str(s.value_utf8, 'Enqueued') AS TIMESTAMP) AS BIGINT),
CAST(CAST(i.created_at AS TIMESTAMP) AS BIGINT)) AS since,
CAST(CAST(json_get_str(s.value_utf8, 'In', 'Created') AS TIMESTAMP) AS BIGINT) AS asked ` + from + `)
GROUP BY label, state, waiting, awaiting`
	if err := e.sql(ctx, admin, q, &counts); err != nil {
		return observe.Snapshot{}, err
	}
	var rows []liveRow
	if e.cfg.Limits.StatusRows > 0 {
		q = `SELECT id, label, owner, depth, kind, state, attempt, created, started, enqueued, detached, waiting, awaiting
FROM (SELECT s.service_key AS id, ` + labelCol + ` AS label, json_get_str(s.value_utf8, 'In', 'Owner') AS owner,
json_get_int(s.value_utf8, 'In', 'Depth') AS depth, json_get_int(s.value_utf8, 'In', 'Kind') AS kind,
` + stateCol + ` AS state, json_get_int(s.value_utf8, 'Attempt') AS attempt,
json_get_str(s.value_utf8, 'In', 'Created') AS created, json_get_str(s.value_utf8, 'Started') AS started,
json_get_str(s.value_utf8, 'Enqueued') AS enqueued, json_get_bool(s.value_utf8, 'Detached') AS detached,
` + waitingCol + ` AS waiting, ` + awaitingCol + ` AS awaiting,
ROW_NUMBER() OVER (PARTITION BY ` + labelCol + ` ORDER BY i.created_at DESC, s.service_key) AS rn ` + from +
			`) WHERE rn <= ` + strconv.Itoa(e.cfg.Limits.StatusRows)
		if err := e.sql(ctx, admin, q, &rows); err != nil {
			return observe.Snapshot{}, err
		}
	}
	var services []struct {
		Name string `json:"name"`
	}
	prefix := workName(e.cfg.ns, "")
	if err := e.sql(ctx, admin, `SELECT name FROM sys_service WHERE starts_with(name, `+sqlString(prefix)+`)`, &services); err != nil {
		return observe.Snapshot{}, err
	}
	now := time.Now()
	byTarget := map[string]*observe.TargetCounts{}
	target := func(label string) *observe.TargetCounts {
		tc := byTarget[label]
		if tc == nil {
			tc = &observe.TargetCounts{Target: label}
			byTarget[label] = tc
		}
		return tc
	}
	for _, l := range e.cfg.Limits.DeploymentTargets {
		target(l)
	}
	for _, s := range services {
		target(strings.TrimPrefix(s.Name, prefix)).Pollers = 1
	}
	total := 0
	for _, c := range counts {
		i := observe.State(c.State).Index()
		if i < 0 {
			continue
		}
		tc := target(c.Label)
		tc.Counts[i] += c.N
		total += c.N
		oldest, asked := time.Unix(0, c.Oldest), time.Unix(0, c.Asked).UTC()
		switch st := observe.State(c.State); {
		case st == work.StateQueued && c.Awaiting:
			// Not in the dispatch queue: neither Queued nor its age.
			tc.AwaitingApproval += c.N
			if c.Asked > 0 && (tc.OldestApproval.IsZero() || asked.Before(tc.OldestApproval)) {
				tc.OldestApproval = asked
			}
		case st == work.StateQueued:
			if c.Oldest > 0 {
				tc.OldestQueued = max(tc.OldestQueued, now.Sub(oldest))
			}
		case c.Waiting:
			tc.Waiting += c.N
		}
	}
	var live []observe.LiveWork
	for _, r := range rows {
		live = append(live, r.live())
	}
	var tcs []observe.TargetCounts
	for _, tc := range byTarget {
		tcs = append(tcs, *tc)
	}
	return driver.DeploymentSnapshot(now, tcs, live, max(total-len(live), 0)), nil
}

// sql runs one query bounded by the RPC timeout, its error the engine's.
func (e *engine) sql(ctx context.Context, admin *ingress, q string, out any) error {
	qctx, cancel := e.rpc(ctx)
	defer cancel()
	return fromIngress(qctx, admin.query(qctx, q, out))
}

func (r liveRow) live() observe.LiveWork {
	lw := observe.LiveWork{ID: r.ID, Target: r.Label, Owner: r.Owner, Depth: r.Depth, Kind: observe.Kind(r.Kind),
		State: observe.State(r.State), Detached: r.Detached, Attempt: max(r.Attempt, 1),
		Waiting: r.Waiting && !observe.State(r.State).Terminal(), AwaitingApproval: r.Awaiting && observe.State(r.State) == work.StateQueued}
	lw.Created, _ = time.Parse(time.RFC3339Nano, r.Created)
	lw.Started, _ = time.Parse(time.RFC3339Nano, r.Started)
	lw.Enqueued, _ = time.Parse(time.RFC3339Nano, r.Enqueued)
	return lw
}
