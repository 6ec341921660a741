// Package observe is the observer seam of agentwork's engines: what an
// engine reports and how an Observer receives it. Package telemetry is
// the Observer most programs use (OpenTelemetry spans and metrics,
// Prometheus, slog); write one of your own against this package.
//
//	eng := work.New(work.WithObserver(myObserver)) // any observe.Observer
//
// An engine calls Observer.Bind once for each Work it accepts and then
// Observer.Event for each lifecycle Event of that Work, in order, and
// Observer.Begin around each model-facing call (a ToolCall). Optional
// interfaces add more: Replayer (a durable engine rebuilds a span from
// its history), Watcher (the deployment view: a Snapshot of the live
// Work, read through Watched when the Observer collects).
//
// Nothing here carries content. No Event, ToolCall or Snapshot holds a
// child's input or output, a failure's text, a prompt, guidance, a job's
// handle or an update's value: only ids, labels, states, classes, counts
// and times.
//
// The lifecycle's vocabulary lives here too, as the events speak it:
// State, Kind, Progress and Usage, the budget names and the refusal
// reasons of an update.
package observe
