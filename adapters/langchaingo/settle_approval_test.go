package langchaingo_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// TestRunUntilSettledApproval: the coordinator's run ends while its child
// awaits approval; the approval notice does not resume it (it is not a
// settlement); the application, woken by its own subscription, reads the
// request and answers it. Approved, the child completes and the
// coordinator is resumed once with its notice; denied, the Work ends
// cancelled and RunUntilSettled returns without a resume.
func TestRunUntilSettledApproval(t *testing.T) {
	for _, approve := range []bool{true, false} {
		name := "denied"
		if approve {
			name = "approved"
		}
		t.Run(name, func(t *testing.T) {
			sup := work.New()
			defer closeSup(t, sup)
			ap := sup
			var seen [][]string
			steps := []scripted.Step{
				scripted.ToolCall("deploy", js(map[string]any{"input": "payments", "run_in_background": true})),
				scripted.Text("waiting for approval"),
			}
			var kit *lc.Kit
			if approve {
				steps = append(steps,
					scripted.Func(func(req scripted.Request) scripted.Step {
						seen = append(seen, notices(req))
						list, _ := sup.List(context.Background(), kit.Owner())
						return scripted.ToolCall("work", js(map[string]any{"action": "result", "id": list[0].Work.ID}))
					}),
					scripted.Text("deployed"))
			}
			deploy := lc.NewFunction("deploy", "Deploys a service.", func(_ context.Context, in string) (string, error) {
				return "deployed " + in, nil
			}, lc.WithApproval(time.Hour))
			kit, err := lc.Prepare(context.Background(), sup, scripted.New(steps...), []tools.Tool{lc.Backgroundable(deploy)}, lc.WithOwner("coord"))
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()

			// The application: answers each approval request it is told of.
			sub, err := sup.Subscribe(ctx, kit.Owner(), 0)
			if err != nil {
				t.Fatal(err)
			}
			answered := make(chan []work.ApprovalRequest, 1)
			go func() {
				defer close(answered)
				for n := range sub.C() {
					if n.Kind != work.NoticeApproval {
						continue
					}
					reqs, err := ap.Pending(ctx, work.Approver())
					if err != nil {
						t.Errorf("Pending: %v", err)
						return
					}
					for _, r := range reqs {
						if approve {
							err = ap.Approve(ctx, work.Approver(), r.Work.ID)
						} else {
							err = ap.Deny(ctx, work.Approver(), r.Work.ID)
						}
						if err != nil {
							t.Errorf("answer: %v", err)
						}
					}
					answered <- reqs
					return
				}
			}()
			exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(5))
			res, err := kit.RunUntilSettled(ctx, exec, "deploy payments")
			sub.Close()
			reqs := <-answered
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != 1 || reqs[0].TargetLabel != "deploy" || reqs[0].Input != "payments" || reqs[0].Owner != "coord" {
				t.Errorf("the application read %+v, want one deploy request", reqs)
			}
			if approve {
				if res.Resumes != 1 || res.Notices != 1 || res.Answer() != "deployed" ||
					!slices.EqualFunc(seen, [][]string{{"deploy completed"}}, slices.Equal) {
					t.Errorf("approved: result %+v, notices %v; want one resume announcing deploy completed", res, seen)
				}
				return
			}
			if res.Resumes != 0 || res.Capped || res.Answer() != "waiting for approval" {
				t.Errorf("denied: result %+v, want no resume", res)
			}
			list, err := sup.List(ctx, kit.Owner())
			if err != nil || len(list) != 1 || list[0].State != work.StateCancelled || list[0].Class != work.ClassDenied {
				t.Errorf("denied: %+v, %v; want one Work cancelled with class denied", list, err)
			}
		})
	}
}
