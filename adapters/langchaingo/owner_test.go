package langchaingo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// TestWithOwnerInsideChildFails: a child cannot escape its scope (and the
// nesting limit) by naming a top-level owner.
func TestWithOwnerInsideChildFails(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	got := make(chan error, 1)
	child := lc.NewFunction("nested", "d", func(ctx context.Context, _ string) (string, error) {
		_, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{}, lc.WithOwner("escape"))
		got <- err
		return "", nil
	})
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{child})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Tools()[0].Call(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err == nil || !strings.Contains(err.Error(), "WithOwner inside a child") {
		t.Fatalf("Prepare with WithOwner inside a child: err = %v, want refusal", err)
	}
}
