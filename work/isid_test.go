package work_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

func TestIsID(t *testing.T) {
	s := work.New()
	defer s.Close(context.Background())
	ref, err := s.Start(context.Background(), work.Spec{Owner: work.NewOwner("o"), Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   string
		want bool
	}{
		{"a real id", ref.ID, true},
		{"empty", "", false},
		{"short", ref.ID[:31], false},
		{"long", ref.ID + "0", false},
		{"upper case", strings.ToUpper(strings.Repeat("ab", 16)), false},
		{"not hex", strings.Repeat("g", 32), false},
		{"content", "please summarise the secret plan", false},
	} {
		if got := boundary.IsID(tc.id); got != tc.want {
			t.Errorf("%s: IsID(%q) = %v, want %v", tc.name, tc.id, got, tc.want)
		}
	}
}
