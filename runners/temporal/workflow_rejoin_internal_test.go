package temporal

import (
	"testing"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/work/observe"
)

// TestLostAtUnderCodec: an attempt's heartbeat details (its progress and
// the Worker's rejoin queue) are encoded with the client's data converter;
// the SDK hands the Work's workflow the heartbeat timeout through the
// client's failure converter, which stays on the default data converter
// unless the client was given one of its own. Under a payload codec
// lostAt still finds the queue, opening the details with the Worker's
// converter (the chaos run's server restart under the codec failed every
// running Work worker_lost without it); with a failure converter on the
// codec, as without a codec, the SDK opens them itself.
func TestLostAtUnderCodec(t *testing.T) {
	const queue = "agentwork:rejoin:0123456789abcdef"
	codec := testcodec.Converter()
	sent := temporal.NewHeartbeatTimeoutError(observe.Progress{Done: 1, Total: 2}, queue)
	for _, tc := range []struct {
		name           string
		encode, decode converter.DataConverter // the failure converters' data converters
		worker         converter.DataConverter
		want           string
	}{
		{"no codec", nil, nil, converter.GetDefaultDataConverter(), queue},
		{"codec, default failure converter", codec, nil, codec, queue},
		{"codec, failure converter on the codec", codec, codec, codec, queue},
		{"codec, a Worker without the converter", codec, nil, converter.GetDefaultDataConverter(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The worker's heartbeats are encoded with its client's data
			// converter; the workflow's failure converter decodes them.
			f := temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: tc.encode}).ErrorToFailure(sent)
			got := temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: tc.decode}).FailureToError(f)
			if q := lostAt(got, tc.worker); q != tc.want {
				t.Fatalf("lostAt = %q, want %q", q, tc.want)
			}
		})
	}
	if q := lostAt(temporal.NewTimeoutError(0, nil), codec); q != "" {
		t.Fatalf("a timeout with no heartbeat: %q", q)
	}
}
