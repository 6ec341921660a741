package work

import "testing"

// TestLabelledIn: the profile reader matches the probing goroutine's
// record only, and the label's value exactly (12 is not 1).
func TestLabelledIn(t *testing.T) {
	const fn = "example.com/m/work.callerLabelled"
	profile := "goroutine profile: total 3\n" +
		"1 @ 0x1 0x2\n# labels: {\"agentwork.supervisor\":\"1\"}\n#\t0x1\tother.f+0x10\t/x.go:1\n\n" +
		"1 @ 0x3 0x4\n# labels: {\"a\":\"b\", \"agentwork.supervisor\":\"12\"}\n#\t0x3\t" + fn + "+0x20\t/y.go:2\n#\t0x4\tmain.main+0x5\t/z.go:3\n\n" +
		"1 @ 0x5\n#\t0x5\t" + fn + "er+0x1\t/w.go:4\n\n"
	for _, c := range []struct {
		v    string
		want bool
	}{{"12", true}, {"1", false}, {"2", false}, {"b", false}} {
		if got := labelledIn([]byte(profile), fn, c.v); got != c.want {
			t.Errorf("labelledIn(%q) = %v, want %v", c.v, got, c.want)
		}
	}
	if labelledIn([]byte("1 @ 0x5\n#\t0x5\t"+fn+"+0x1\t/w.go:4\n\n"), fn, "12") {
		t.Error("a record without labels matched")
	}
}
