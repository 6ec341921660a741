package agentwork_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCoreImportsStandardLibraryOnly fails when work/ or middleware/ depend
// on any module outside the standard library (the root module's own
// internal packages, such as the fake clock middleware/adaptertest runs
// on, are checked with them: their dependencies are listed too).
func TestCoreImportsStandardLibraryOnly(t *testing.T) {
	for _, pkg := range []string{"./work/...", "./middleware/..."} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "matched no packages") {
				continue
			}
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, line := range strings.Fields(string(out)) {
			if !strings.HasPrefix(line, "github.com/agentwork/agentwork/work") &&
				!strings.HasPrefix(line, "github.com/agentwork/agentwork/middleware") &&
				!strings.HasPrefix(line, "github.com/agentwork/agentwork/internal/") {
				t.Errorf("%s depends on non-standard package %s", pkg, line)
			}
		}
	}
}

// TestNoCrossModuleInternalImports fails when a Go file of one module of
// this repository imports an internal package of another (a consumer of
// a published module could not build it): every import of a path under
// the root module's path that has an internal element must belong to the
// importing file's own module.
func TestNoCrossModuleInternalImports(t *testing.T) {
	const root = "github.com/agentwork/agentwork"
	modules := map[string]string{} // directory -> module path
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			dir := filepath.ToSlash(filepath.Dir(p))
			modules[dir] = path.Join(root, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	moduleOf := func(dir string, paths map[string]string) string { // longest enclosing module
		best := ""
		for d, m := range paths {
			if (dir == d || d == "." || strings.HasPrefix(dir, d+"/")) && len(m) > len(best) {
				best = m
			}
		}
		return best
	}
	byPath := map[string]string{}
	for _, m := range modules {
		byPath[m] = m
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		own := moduleOf(filepath.ToSlash(filepath.Dir(p)), modules)
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(ip, root) || !(strings.Contains(ip, "/internal/") || strings.HasSuffix(ip, "/internal")) {
				continue
			}
			checked++
			owner := ""
			for m := range byPath {
				if (ip == m || strings.HasPrefix(ip, m+"/")) && len(m) > len(owner) {
					owner = m
				}
			}
			if owner != own {
				t.Errorf("%s (module %s) imports %s, internal to module %s", p, own, ip, owner)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no internal import found at all: the walk is broken")
	}
}
