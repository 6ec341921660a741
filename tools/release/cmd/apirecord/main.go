// Command apirecord writes the exported API of every published package
// (the non-internal, non-main packages of release.Published's modules) to
// api/<module path with dashes>.txt, one feature a line, sorted, in the
// spirit of the Go repository's api/*.txt:
//
//	pkg github.com/agentwork/agentwork/work, func New(...Option) *Engine
//	pkg github.com/agentwork/agentwork/work, method (*Engine) Close(context.Context) error
//	pkg github.com/agentwork/agentwork/work, type Budget struct, MaxTurns int
//
// Without -w it compares the record with the code and exits 1 on a
// difference, printing the features added and removed (make lint); with
// -w it rewrites the record (make api).
//
//	cd tools/release && go run ./cmd/apirecord [-w]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/agentwork/agentwork/tools/release"
)

func main() {
	write := flag.Bool("w", false, "rewrite the record instead of checking it")
	flag.Parse()
	ok, err := run(*write)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apirecord:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// recordName is the record file of a module path.
func recordName(modPath string) string {
	return strings.ReplaceAll(modPath, "/", "-") + ".txt"
}

func run(write bool) (bool, error) {
	root, err := release.Root(".")
	if err != nil {
		return false, err
	}
	mods, err := release.Modules(root)
	if err != nil {
		return false, err
	}
	dir := filepath.Join(root, "api")
	ok := true
	want := map[string]bool{}
	for _, m := range mods {
		lines, err := moduleAPI(filepath.Join(root, m.Dir))
		if err != nil {
			return false, fmt.Errorf("%s: %w", m.Dir, err)
		}
		text := []byte(strings.Join(lines, "\n") + "\n")
		name := filepath.Join(dir, recordName(m.Path))
		want[filepath.Base(name)] = true
		if write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return false, err
			}
			if err := os.WriteFile(name, text, 0o644); err != nil {
				return false, err
			}
			fmt.Printf("api/%s: %d features\n", filepath.Base(name), len(lines))
			continue
		}
		old, err := os.ReadFile(name)
		if err != nil {
			fmt.Printf("api/%s: missing (make api writes it)\n", filepath.Base(name))
			ok = false
			continue
		}
		if !bytes.Equal(old, text) {
			ok = false
			added, removed := diff(strings.Split(strings.TrimRight(string(old), "\n"), "\n"), lines)
			fmt.Printf("api/%s differs from the code's exported API (run make api and review the diff):\n", filepath.Base(name))
			for _, l := range removed {
				fmt.Println("  -", l)
			}
			for _, l := range added {
				fmt.Println("  +", l)
			}
		}
	}
	// A record of a module no longer published.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".txt") && !want[e.Name()] {
			if write {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return false, err
				}
				continue
			}
			fmt.Printf("api/%s: no published module has this record (make api removes it)\n", e.Name())
			ok = false
		}
	}
	if !write && ok {
		fmt.Printf("api: the record matches the exported API of %d modules\n", len(mods))
	}
	return ok, nil
}

// diff returns the lines of b not in a and of a not in b (both sorted).
func diff(a, b []string) (added, removed []string) {
	for _, l := range b {
		if _, found := slices.BinarySearch(a, l); !found {
			added = append(added, l)
		}
	}
	for _, l := range a {
		if _, found := slices.BinarySearch(b, l); !found {
			removed = append(removed, l)
		}
	}
	return added, removed
}

// moduleAPI loads the module's packages (not their tests) and returns its
// exported API, sorted.
func moduleAPI(dir string) ([]string, error) {
	cfg := &packages.Config{Dir: dir, Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
		}
		if p.Name == "main" || isInternal(p.PkgPath) || p.Module == nil || p.Module.Dir != dir {
			continue
		}
		lines = append(lines, packageAPI(p.Types)...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

func isInternal(path string) bool {
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}
