package main

import (
	"fmt"
	"testing"
)

// TestCrossings: the engine part uses the rest's helper (an exported
// constant is no crossing); the rest uses the part's constructor, method
// and field, once each.
func TestCrossings(t *testing.T) {
	cs, err := crossings("testdata/p", map[string]bool{"engine.go": true})
	if err != nil {
		t.Fatal(err)
	}
	want := "[{helper (api.go) part -> rest 1} {*engine.start (engine.go) rest -> part 1} " +
		"{field.n (engine.go) rest -> part 1} {newEngine (engine.go) rest -> part 1}]"
	if got := fmt.Sprint(cs); got != want {
		t.Errorf("crossings =\n%s\nwant\n%s", got, want)
	}
	if _, err := crossings("testdata/none", nil); err == nil {
		t.Error("a folder with no Go files: no error")
	}
}
