package durabletest_test

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestTemporalPins: this module's pins are runners/temporal's (the
// in-process Temporal server builds only with them).
func TestTemporalPins(t *testing.T) {
	mine, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.ReadFile("../../../runners/temporal/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	pins := func(b []byte) string {
		s := string(b)
		i := strings.LastIndex(s, "replace (")
		if i < 0 {
			return ""
		}
		s = s[i:]
		return s[:strings.Index(s, "\n)")]
	}
	if p := pins(theirs); p == "" || pins(mine) != p {
		t.Fatalf("go.mod's last replace block differs from runners/temporal/go.mod's:\n%s\nwant:\n%s", pins(mine), p)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
