package restate

import (
	"context"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

func (e *engine) readUpdates(ctx context.Context, o work.Owner, id string, after int) (driver.UpdatesReply, error) {
	var rep driver.UpdatesReply
	if err := e.in.object(ctx, controlService, id, hUpdates, "", driver.UpdatesQuery{Owner: o.ID(), After: after}, &rep); err != nil {
		return driver.UpdatesReply{}, fromIngress(ctx, err)
	}
	return rep, nil
}

// ReadUpdateMeta reads the metadata of a Work's updates from its
// control object's UpdateSizes, never the values.
func (s *store) ReadUpdateMeta(ctx context.Context, o work.Owner, id string, after int) ([]driver.UpdateMeta, bool, error) {
	var rep driver.UpdateMetaReply
	if err := s.in.object(ctx, controlService, id, hSizes, "", driver.UpdatesQuery{Owner: o.ID(), After: after}, &rep); err != nil {
		return nil, false, fromIngress(ctx, err)
	}
	return rep.Updates, rep.Found, nil
}
