package release

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := Root(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestLicenses: every published module holds the root LICENSE, byte for
// byte, so that its zip carries it (the release rehearsal checks the zips).
func TestLicenses(t *testing.T) {
	root := repoRoot(t)
	want, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(want), []byte("Apache License")) || !bytes.Contains(want, []byte("Version 2.0, January 2004")) {
		t.Fatal("LICENSE is not the Apache License 2.0 text")
	}
	for _, dir := range Published {
		got, err := os.ReadFile(filepath.Join(root, dir, "LICENSE"))
		if err != nil {
			t.Errorf("published module %s has no LICENSE: cp LICENSE %s/LICENSE", dir, dir)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/LICENSE differs from the root LICENSE: cp LICENSE %s/LICENSE", dir, dir)
		}
	}
}

// TestRequirements: each published nested module requires the published
// modules it uses at VERSION, with the replace to the checkout.
func TestRequirements(t *testing.T) {
	root := repoRoot(t)
	v, err := Version(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := CheckRequirements(root, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func TestTag(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{".", "v0.1.0"},
		{"runners/temporal", "runners/temporal/v0.1.0"},
	} {
		if got := (Module{Dir: tc.dir}).Tag("v0.1.0"); got != tc.want {
			t.Errorf("Tag(%s) = %s, want %s", tc.dir, got, tc.want)
		}
	}
}
