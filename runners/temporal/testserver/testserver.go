// Package testserver is test support, not for applications: it starts an
// in-process Temporal server (go.temporal.io/server/temporaltest) set up
// as the runner needs it, for the runner's own tests and those of other
// modules of this repository that run Work on Temporal (such as the Eino
// adapter's durable tests): one partition per task queue, and the
// owner search attribute (temporal.OwnerSearchAttribute) registered.
//
// A module that imports it needs the Temporal server's dependency pins
// (the replace block of runners/temporal/go.mod).
package testserver

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/dynamicconfig"
	temporalserver "go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/agentwork/agentwork/runners/temporal"
)

// New starts an in-process Temporal server with one partition per task
// queue (the server's default of four makes a task wait, now and then,
// tens of seconds for a poller that only polls another partition: a
// test's queues have one worker each) and registers the owner search
// attribute in its default namespace. Stop it with its Stop method (or
// pass temporaltest.WithT, which stops it when the test ends).
func New(opts ...temporaltest.TestServerOption) (*temporaltest.TestServer, error) {
	dc := dynamicconfig.StaticClient{
		// temporaltest's own setting, replaced by this client.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():      []dynamicconfig.ConstrainedValue{{Value: 1}},
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key():     []dynamicconfig.ConstrainedValue{{Value: 1}},
	}
	srv := temporaltest.NewServer(append(opts, temporaltest.WithBaseServerOptions(temporalserver.WithDynamicConfigClient(dc)))...)
	if err := AddOwnerAttribute(srv.GetDefaultClient(), srv.GetDefaultNamespace()); err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}

// AddOwnerAttribute registers the runner's owner search attribute (a
// Keyword) in namespace ns, as every namespace the runner uses needs.
func AddOwnerAttribute(c client.Client, ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        ns,
		SearchAttributes: map[string]enumspb.IndexedValueType{temporal.OwnerSearchAttribute: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	})
	return err
}
