package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// A function child reports its updates itself, with work.ReportUpdate on
// its own context (an agent child gets the emit_update tool instead), and
// the application reads them by cursor.
func ExampleWithUpdates() {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)
	crawl := lc.NewFunction("crawl", "Crawls a site.", func(ctx context.Context, site string) (string, error) {
		for i, page := range []string{"/", "/docs"} {
			value, _ := json.Marshal(map[string]any{"page": page, "done": i + 1})
			// The key makes a retried report count once.
			if _, err := work.ReportUpdate(ctx, "page-"+page, value, false); err != nil {
				return "", err // a refusal (work.ErrUpdateRefused, its Class the reason)
			}
		}
		return "crawled " + site, nil
	}, lc.WithUpdates(work.UpdatePolicy{MaxUpdates: 8}))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(crawl)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kit.Release()
	ref, _ := kit.Tools()[0].Call(ctx, `{"input":"example.org","run_in_background":true}`)
	var r struct{ ID string }
	json.Unmarshal([]byte(ref), &r)
	sup.Result(ctx, kit.Owner(), r.ID, work.MaxResultWait) // wait until it ends
	ups, _ := sup.Updates(ctx, kit.Owner(), r.ID, 0)       // after cursor 0: all
	for _, u := range ups {
		fmt.Println(u.Seq, string(u.Value))
	}
	// Output:
	// 1 {"done":1,"page":"/"}
	// 2 {"done":2,"page":"/docs"}
}
