package main

import "testing"

// TestJudge: ratio and allocation goals allow their noise margin; the
// exact and under goals allow none.
func TestJudge(t *testing.T) {
	for _, tt := range []struct {
		g    goal
		med  float64
		want string
	}{
		{goal{max: 2, kind: ratio}, 2, "met"},
		{goal{max: 2, kind: ratio}, 2.19, "within noise"},
		{goal{max: 2, kind: ratio}, 2.21, "MISSED"},
		{goal{max: 5, kind: alloc}, 7, "within noise"},
		{goal{max: 5, kind: alloc}, 7.5, "MISSED"},
		{goal{max: 4, kind: exact}, 4, "met"},
		{goal{max: 4, kind: exact}, 4.001, "MISSED"},
		{goal{max: 1024, kind: under}, 1023.9, "met"},
		{goal{max: 1024, kind: under}, 1024, "MISSED"},
		{goal{max: 0, kind: ratio}, 99, "(info)"},
	} {
		if got := judge(tt.g, tt.med, 0.10, 2); got != tt.want {
			t.Errorf("judge(max %g, kind %d, %g) = %q, want %q", tt.g.max, tt.g.kind, tt.med, got, tt.want)
		}
	}
}
