package temporal

import (
	"context"
	"errors"

	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// ReadUpdates reads a Work's updates: its workflow's state, read with a
// query. They survive its workers, and stay readable after the Work
// ended while its owner's registry retains its record (WithOptions: work.WithRetention)
// and Temporal its history (the namespace's retention; a query of a
// closed workflow replays its history on a Worker).
func (s *store) ReadUpdates(ctx context.Context, o work.Owner, id string, after int) ([]work.Update, bool, error) {
	var rep driver.UpdatesReply
	err := (*engine)(s).queryWork(ctx, id, queryUpdates, &rep, driver.UpdatesQuery{Owner: o.ID(), After: after})
	return rep.Updates, rep.Found, err
}

// ReadUpdateMeta reads the metadata of a Work's updates (never their
// values) with the update-sizes query.
func (s *store) ReadUpdateMeta(ctx context.Context, o work.Owner, id string, after int) ([]driver.UpdateMeta, bool, error) {
	var rep driver.UpdateMetaReply
	err := (*engine)(s).queryWork(ctx, id, queryUpdateMap, &rep, driver.UpdatesQuery{Owner: o.ID(), After: after})
	return rep.Updates, rep.Found, err
}

// queryWork sends query name with arg to Work id's workflow and decodes
// its answer into out, retrying a transient failure up to tries
// times while ctx is not done (a query that reached a worker that died
// fails or times out; the next one goes to a live worker).
func (e *engine) queryWork(ctx context.Context, id, name string, out, arg any) error {
	var v converter.EncodedValue
	err := retry(ctx, e.cfg.RPCTimeout, tries, func(ctx context.Context) (err error) {
		v, err = e.c.QueryWorkflow(ctx, id, "", name, arg)
		return err
	})
	if err != nil {
		if err := fromTemporal(err); !errors.Is(err, errWorkflowClosed) {
			return err
		}
		return work.ErrNotFound
	}
	if err := v.Get(out); err != nil {
		return undecodable(err)
	}
	return nil
}
