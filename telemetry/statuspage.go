package telemetry

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// statusRefresh is how often the HTML status page reloads itself.
const statusRefresh = 5 * time.Second

// maxStatusRows bounds the live Work rows one status page shows; the rest
// are counted in more.
const maxStatusRows = 500

// StatusPage is the status page's data, the JSON form of the page. It holds
// ids, target labels, states, counts and durations only, never content.
type StatusPage struct {
	Time time.Time `json:"time"`
	// Engines says whether every watched engine answered: while one did
	// not (a durable runner's service away), what it holds is missing
	// from the counts and rows below, not zero.
	Engines StatusEngines  `json:"engines"`
	Slots   StatusSlots    `json:"slots"`
	Queue   StatusQueue    `json:"queue"`
	Waits   StatusWaits    `json:"waits"`
	Targets []StatusTarget `json:"targets"`
	Work    []StatusWork   `json:"work"`
	// More is how many live Works were left out: beyond the first 500,
	// and those a deployment view (a durable engine's, bounded to the
	// newest Works per target) did not list.
	More int `json:"more"`
}

// StatusEngines counts the watched engines and those whose Snapshot
// failed this time (Unavailable > 0: the page is incomplete).
type StatusEngines struct {
	Watched     int  `json:"watched"`
	Unavailable int  `json:"unavailable"`
	Available   bool `json:"available"`
}

// StatusSlots is running-slot usage in this process: running plus
// cancel-requested Work (except external jobs waiting between polls, which
// hold no slot) against the sum of the running limits (shared and per
// target).
type StatusSlots struct {
	InUse int `json:"inUse"`
	Limit int `json:"limit"`
}

// StatusQueue is the queue: how many Works wait for a slot and how long the
// oldest has waited (Work awaiting approval is not in it: see StatusWaits).
type StatusQueue struct {
	Length           int     `json:"length"`
	OldestAgeSeconds float64 `json:"oldestAgeSeconds"`
}

// StatusWaits is the Work that waits: external jobs between polls (running,
// holding no slot), Work awaiting approval (queued, outside the dispatch
// queue) and how long the oldest approval request has waited.
type StatusWaits struct {
	Waiting                  int     `json:"waiting"`
	AwaitingApproval         int     `json:"awaitingApproval"`
	OldestApprovalAgeSeconds float64 `json:"oldestApprovalAgeSeconds"`
}

// StatusTarget is one target label's Work by state (live and retained
// terminal Work, as in agentwork_work_items) and its oldest ages.
type StatusTarget struct {
	Target                          string         `json:"target"`
	States                          map[string]int `json:"states"`
	OldestQueuedAgeSeconds          float64        `json:"oldestQueuedAgeSeconds"`
	OldestCancelRequestedAgeSeconds float64        `json:"oldestCancelRequestedAgeSeconds"`
	// Waiting and AwaitingApproval count the target's external jobs
	// waiting between polls (counted as running in States) and its Work
	// awaiting approval (counted as queued in States);
	// OldestApprovalAgeSeconds is how long its oldest pending approval
	// request has waited.
	Waiting                  int     `json:"waiting"`
	AwaitingApproval         int     `json:"awaitingApproval"`
	OldestApprovalAgeSeconds float64 `json:"oldestApprovalAgeSeconds"`
	// SlotsInUse is the running slots the target's Work holds in this
	// process; Limit is the target's own running limit (a Temporal
	// Worker's), 0 when it shares the process's (Slots.Limit).
	SlotsInUse int `json:"slotsInUse"`
	Limit      int `json:"limit,omitempty"`
	// Pollers is how many workers poll the target's queue, in a durable
	// engine's deployment view (absent elsewhere).
	Pollers *int `json:"pollers,omitempty"`
}

// StatusWork is one live Work (queued, running or cancel-requested).
type StatusWork struct {
	ID             string  `json:"id"`
	Target         string  `json:"target"`
	Owner          string  `json:"owner"`
	State          string  `json:"state"`
	ElapsedSeconds float64 `json:"elapsedSeconds"` // since queued (queued Work) or started
	// CancelRequestedSeconds is how long a cancel-requested Work has been
	// asked to stop.
	CancelRequestedSeconds float64 `json:"cancelRequestedSeconds,omitempty"`
	Attempt                int     `json:"attempt"`
	// Lending: the Work waits on its own descendants and lends them its
	// running slot.
	Lending  bool `json:"lending,omitempty"`
	Detached bool `json:"detached"`
	// Waiting: an external job between polls (running, holding no slot).
	Waiting bool `json:"waiting,omitempty"`
	// AwaitingApproval: queued Work held for its approval, outside the
	// dispatch queue.
	AwaitingApproval bool `json:"awaitingApproval,omitempty"`
	// Progress holds the Work's progress counts by name when the engine
	// reports them (absent otherwise).
	Progress map[string]int64 `json:"progress,omitempty"`
}

// Status returns the status page's data for the engines the Observer
// watches (observe.Watched: a *work.Engine or another engine). It is safe
// for concurrent use; each engine's Snapshot gets context.Background()
// (a *work.Engine's takes its lock briefly). StatusHandler passes the
// request's context instead.
func (o *Observer) Status() StatusPage {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	return o.statusCtx(context.Background())
}

// statusCtx is Status with ctx for the engines' Snapshots.
func (o *Observer) statusCtx(ctx context.Context) StatusPage {
	c := o.census(ctx, o.watchedEngines())
	p := StatusPage{Time: time.Now().UTC(), Engines: StatusEngines{Watched: c.engines, Unavailable: c.unanswered, Available: c.unanswered == 0}, Slots: StatusSlots{InUse: c.slotsTotal(), Limit: c.limitTotal()},
		Queue: StatusQueue{Length: c.queued}, Waits: c.waits.status(), Targets: []StatusTarget{}, Work: []StatusWork{}}
	for target, n := range c.counts {
		t := StatusTarget{Target: target, States: map[string]int{},
			OldestQueuedAgeSeconds:          c.oldestQueued[target].Seconds(),
			OldestCancelRequestedAgeSeconds: c.oldestCancel[target].Seconds(),
			Waiting:                         c.waits.waiting[target], AwaitingApproval: c.waits.awaiting[target],
			OldestApprovalAgeSeconds: c.waits.oldestApproval[target].Seconds(),
			SlotsInUse:               c.slots[target], Limit: c.limits[target]}
		if n, ok := c.pollers[target]; ok {
			t.Pollers = &n
		}
		for i, st := range observe.States {
			t.States[string(st)] = n[i]
		}
		p.Queue.OldestAgeSeconds = max(p.Queue.OldestAgeSeconds, t.OldestQueuedAgeSeconds)
		p.Targets = append(p.Targets, t)
	}
	sort.Slice(p.Targets, func(i, j int) bool { return p.Targets[i].Target < p.Targets[j].Target })
	p.More = c.omitted
	for i, w := range c.live {
		if i == maxStatusRows {
			p.More += len(c.live) - i
			break
		}
		p.Work = append(p.Work, StatusWork{ID: w.ID, Target: w.Target, Owner: w.Owner, State: string(w.State),
			ElapsedSeconds: w.Elapsed.Seconds(), CancelRequestedSeconds: w.CancelWaiting.Seconds(),
			Attempt: w.Attempt, Lending: w.Lending, Detached: w.Detached, Waiting: w.Waiting,
			AwaitingApproval: w.AwaitingApproval, Progress: progressOf(w.LiveWork)})
	}
	return p
}

// progressOf returns a live Work's non-zero progress counts by name (done,
// total, model_requests, tool_calls), or nil when it has reported none.
func progressOf(w observe.LiveWork) map[string]int64 {
	var m map[string]int64
	for _, c := range [...]struct {
		name string
		n    int64
	}{{"done", w.Progress.Done}, {"total", w.Progress.Total},
		{"model_requests", w.Progress.ModelRequests}, {"tool_calls", w.Progress.ToolCalls}} {
		if c.n != 0 {
			if m == nil {
				m = make(map[string]int64, 4)
			}
			m[c.name] = c.n
		}
	}
	return m
}

// StatusHandler returns a zpages-style live status page for the
// engines the Observer watches (observe.Watched): slots in use against the limit, the
// queue's length and oldest age, the external jobs waiting between polls and
// the Work awaiting approval (with the oldest request's age), every target's
// Work by state and each
// live Work's id, target, owner, state (marked "waiting, no slot" or
// "awaiting approval"), elapsed time, attempt and progress counts. The page
// is HTML (html/template) that reloads itself every 5 seconds; with
// ?format=json, or an Accept header naming application/json and not
// text/html, it is the same data as JSON (StatusPage). It never shows
// content: no input, output, prompt, guidance or failure text.
//
// Serve it beside /metrics on an operator-only address: it shows work
// ids and owner ids. It answers GET and HEAD only.
func (o *Observer) StatusHandler() http.Handler {
	if o == nil {
		o = new(Observer) // a nil Observer is the zero one
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// The request's context: a remote engine's Snapshot stops when
		// the client goes away.
		p := o.statusCtx(r.Context())
		w.Header().Set("Cache-Control", "no-store")
		if wantsJSON(r) {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(p)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = statusTemplate.Execute(w, statusView{StatusPage: p, Refresh: int(statusRefresh.Seconds()), States: observe.States[:]})
	})
}

func wantsJSON(r *http.Request) bool {
	if f := r.URL.Query().Get("format"); f != "" {
		return f == "json"
	}
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/html")
}

type statusView struct {
	StatusPage
	Refresh int
	States  []observe.State
}

var statusTemplate = template.Must(template.New("status").Funcs(template.FuncMap{
	"dur": func(s float64) string {
		return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
	},
	"count": func(m map[string]int, st observe.State) int { return m[string(st)] },
	"deref": func(p *int) int { return *p },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{{.Refresh}}">
<title>agentwork status</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.summary span{display:inline-block;margin-right:2em;font-size:1.2em}
.full{color:#b00;font-weight:bold}
code{font-size:.9em}
</style></head>
<body>
<h1>agentwork status</h1>
<p>As of <time id="time">{{.Time.Format "2006-01-02T15:04:05Z07:00"}}</time>; reloads every {{.Refresh}} s. <a href="?format=json">JSON</a></p>
{{if .Engines.Unavailable}}<p id="engine-unavailable" class="full">Engine unavailable: {{.Engines.Unavailable}} of {{.Engines.Watched}} watched engines did not answer. What they hold is missing below (not zero); the counts are incomplete until they answer again.</p>{{end}}
<p class="summary">
<span>Slots in use: <b id="slots-in-use" {{if and (gt .Slots.Limit 0) (ge .Slots.InUse .Slots.Limit)}}class="full"{{end}}>{{.Slots.InUse}}</b> / <b id="slots-limit">{{.Slots.Limit}}</b></span>
<span>Queued: <b id="queue-length">{{.Queue.Length}}</b></span>
<span>Oldest queued: <b id="queue-oldest">{{dur .Queue.OldestAgeSeconds}}</b></span>
<span>Jobs waiting (no slot): <b id="jobs-waiting">{{.Waits.Waiting}}</b></span>
<span>Awaiting approval: <b id="awaiting-approval">{{.Waits.AwaitingApproval}}</b>{{if .Waits.AwaitingApproval}}, oldest <b id="approval-oldest">{{dur .Waits.OldestApprovalAgeSeconds}}</b>{{end}}</span>
</p>
<h2>Work by target and state</h2>
<p>Live states are exact; terminal states count the finished Work still retained (not totals: see agentwork_work_transitions_total).</p>
<table id="targets">
<thead><tr><th>target</th>{{range .States}}<th>{{.}}</th>{{end}}<th>oldest queued</th><th>oldest cancel-requested</th><th>jobs waiting</th><th>awaiting approval</th><th>oldest approval</th><th>slots</th><th>workers polling</th></tr></thead>
<tbody>
{{- $states := .States}}
{{- range .Targets}}
<tr data-target="{{.Target}}"><td>{{.Target}}</td>{{$t := .}}{{range $states}}<td class="n" data-state="{{.}}">{{count $t.States .}}</td>{{end}}<td class="n">{{dur .OldestQueuedAgeSeconds}}</td><td class="n">{{dur .OldestCancelRequestedAgeSeconds}}</td><td class="n" data-waits="waiting">{{.Waiting}}</td><td class="n" data-waits="awaiting-approval">{{.AwaitingApproval}}</td><td class="n">{{dur .OldestApprovalAgeSeconds}}</td><td class="n">{{.SlotsInUse}}{{if .Limit}} / {{.Limit}}{{end}}</td><td class="n"{{if .Pollers}} data-pollers="{{deref .Pollers}}"{{end}}>{{if .Pollers}}{{deref .Pollers}}{{end}}</td></tr>
{{- else}}
<tr><td colspan="14">no work yet</td></tr>
{{- end}}
</tbody></table>
<h2>Live work</h2>
<table id="work">
<thead><tr><th>id</th><th>target</th><th>owner</th><th>state</th><th>elapsed</th><th>attempt</th><th>progress</th></tr></thead>
<tbody>
{{- range .Work}}
<tr data-id="{{.ID}}" data-state="{{.State}}"><td><code>{{.ID}}</code></td><td>{{.Target}}</td><td>{{.Owner}}{{if .Detached}} (detached){{end}}</td><td>{{.State}}{{if .CancelRequestedSeconds}} for {{dur .CancelRequestedSeconds}}{{end}}{{if .Lending}} (waiting on its children, slot lent){{end}}{{if .Waiting}} (job waiting, no slot){{end}}{{if .AwaitingApproval}} (awaiting approval){{end}}</td><td class="n">{{dur .ElapsedSeconds}}</td><td class="n">{{.Attempt}}</td><td>{{range $k, $v := .Progress}}{{$k}}={{$v}} {{end}}</td></tr>
{{- else}}
<tr><td colspan="7">no live work</td></tr>
{{- end}}
</tbody></table>
{{if .More}}<p id="more">and {{.More}} more live work items</p>{{end}}
</body></html>
`))
