// Package work is agentwork's engine: the Engine (New makes the
// in-process one, which runs background Work for owners, agent instances,
// and keeps each Work's lifecycle, result, guidance mailbox and limits;
// a durable runner makes one whose Work runs on its service) and its
// values (Spec, Ref, Status, Budget, Job, the receipts).
//
//	sup := work.New() // one per process
//	defer sup.Close(ctx)
//	owner := work.NewOwner("coordinator-1")
//	ref, err := sup.Start(ctx, work.Spec{Owner: owner,
//		Target: work.Target{Label: "research", Kind: work.KindFunction},
//		Run:    func(ctx context.Context) (string, error) { return "a report", nil }})
//	st, out, err := sup.Result(ctx, owner, ref.ID, 10*time.Second) // completed, "a report"
//
// Applications rarely call it directly: the langchaingo adapter
// (adapters/langchaingo) turns a model's run_in_background tool calls and
// its work tool into these calls. The durable engines (runners/temporal,
// runners/restate) return an Engine too, built on work/driver.
//
// A Work is created queued, runs when a running slot is free, and ends in
// exactly one terminal state (completed, failed or cancelled; a cancelled
// running Work is cancel-requested until its child returns). Its owner
// lists, inspects, awaits, cancels, detaches and steers it (Status, List,
// Result, Cancel, Detach, Send); Release ends an owner's Work and Close
// all of it. Limits (Option: WithMaxRunning and the others, in options.go)
// and budgets bound everything an owner starts; every refusal is an
// *Error with a stable Code for errors.Is. Ref, Status and the receipts
// marshal to the JSON the model sees.
//
// The package imports only the standard library, work/observe (the
// observer seam) and its own internal packages: an observe.Observer (WithObserver; the telemetry package
// implements it) receives every lifecycle event. Child output, failure
// text, guidance text and update values never reach an Observer, a
// Status, a Row or an error message; everything the in-process Engine
// holds is process-local.
//
// The engine in depth (slots lent by waiting children, external jobs,
// approval, updates, bounds, what engine implementations share) is
// docs/engine.md in the repository.
package work
