package driver

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// unusable is the Store of an engine made without what it needs to reach
// its service (Config.Unusable): every call answers err; Admissible
// answers the engine's own check first (an invalid option's error).
type unusable struct {
	Admitter // the engine's own Store, for Admissible only
	err      error
}

func (u unusable) Admissible() error {
	if err := u.Admitter.Admissible(); err != nil {
		return err
	}
	return u.err
}

func (u unusable) Records(context.Context, work.Owner) ([]Record, error) { return nil, u.err }
func (u unusable) Progress(context.Context, string) (observe.Progress, bool, error) {
	return observe.Progress{}, false, u.err
}
func (u unusable) Output(context.Context, work.Owner, string) (string, error) { return "", u.err }
func (u unusable) MarkRead(context.Context, work.Owner, string) error         { return u.err }
func (u unusable) ReadUpdateMeta(context.Context, work.Owner, string, int) ([]UpdateMeta, bool, error) {
	return nil, false, u.err
}
func (u unusable) DetachLive(context.Context, work.Owner, string) (bool, error) { return false, u.err }
func (u unusable) ForgetSettled(context.Context, work.Owner, string) error      { return u.err }
func (u unusable) SendGuidance(context.Context, work.Owner, Record, Guidance) (int, time.Time, error) {
	return 0, time.Time{}, u.err
}
func (u unusable) SetPool(context.Context, work.Owner, work.Budget) error { return u.err }
func (u unusable) ReleaseOwner(context.Context, work.Owner) error         { return u.err }
func (u unusable) ReadUpdates(context.Context, work.Owner, string, int) ([]work.Update, bool, error) {
	return nil, false, u.err
}
func (u unusable) CancelWork(context.Context, work.Owner, string) (work.CancelReceipt, error) {
	return work.CancelReceipt{}, u.err
}
func (u unusable) ApprovalIndex(context.Context) ([]ApprovalEntry, error) { return nil, u.err }
func (u unusable) Approval(context.Context, work.Owner, string) (ApprovalInfo, error) {
	return ApprovalInfo{}, u.err
}
func (u unusable) AnswerApproval(context.Context, work.Owner, string, bool) error { return u.err }
func (u unusable) Admit(context.Context, NewWork) (work.Ref, string, string, error) {
	return work.Ref{}, "", "", u.err
}
