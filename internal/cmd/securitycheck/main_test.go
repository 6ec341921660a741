package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCheck finds a test function, a fuzz target and a suite case, and
// reports a reference to a test that does not exist, a case written as a
// function and a function outside _test.go files.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pkg/a_test.go", "package pkg\n\nfunc TestHere(t *testing.T) {}\n\nfunc FuzzHere(f *testing.F) {}\n")
	write("pkg/a.go", "package pkg\n\nfunc TestNotATest() {}\n")
	write("suite/cases.go", "package suite\n\nvar cases = []c{\n\t{\"CaseHere\", run},\n}\n")
	write("SECURITY.md", "| g | `pkg:TestHere`, `pkg:FuzzHere`, `suite:CaseHere` |\n"+
		"| h | `pkg:TestGone`, `pkg:TestNotATest`, `suite:CaseGone`, `nodir:TestX` |\n")
	missing, n, err := check(filepath.Join(dir, "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pkg:TestGone: no such test", "pkg:TestNotATest: no such test", "suite:CaseGone: no such test", "nodir:TestX: no such test"}
	if n != 7 || !reflect.DeepEqual(missing, want) {
		t.Fatalf("check = %q, %d named; want %q, 7", missing, n, want)
	}
}

// TestRepository checks the repository's own SECURITY.md.
func TestRepository(t *testing.T) {
	missing, n, err := check("../../../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || len(missing) > 0 {
		t.Fatalf("SECURITY.md names %d tests; missing %q", n, missing)
	}
}
