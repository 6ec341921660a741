// Package release holds what a release of agentwork is made of: the
// modules a user fetches (Published) and the one version they share (the
// repository's VERSION file). Its commands check them: releasecheck
// rehearses the release through a module proxy on disk, apirecord writes
// and checks the exported API record under api/.
package release

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Published lists the modules a user fetches, by directory relative to the
// repository root ("." is the root module). Each holds a copy of the root
// LICENSE, is tagged at VERSION (Tag) and, when nested, requires the root
// module at VERSION with a replace to the checkout for development. Adding
// a published module is one line here (and its LICENSE copy, which
// TestLicenses asks for). examples, bench, dashboards and tools are not
// published.
var Published = []string{
	".",
	"runners/temporal",
	"runners/restate",
	"adapters/eino",
}

// RootPath is the root module's path.
const RootPath = "github.com/agentwork/agentwork"

// Module is a published module: its directory relative to the repository
// root and its module path.
type Module struct {
	Dir  string
	Path string
}

// Tag is the git tag that publishes m at version v: v for the root module,
// "<dir>/v" for a nested one.
func (m Module) Tag(v string) string {
	if m.Dir == "." {
		return v
	}
	return m.Dir + "/" + v
}

// Modules reads the published modules' paths from their go.mod files
// under the repository root.
func Modules(root string) ([]Module, error) {
	out := make([]Module, 0, len(Published))
	for _, dir := range Published {
		f, err := ReadModFile(root, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, Module{Dir: dir, Path: f.Module.Mod.Path})
	}
	return out, nil
}

// ReadModFile parses dir's go.mod.
func ReadModFile(root, dir string) (*modfile.File, error) {
	name := filepath.Join(root, dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(name, data, nil)
}

// Version reads the release version from root/VERSION: one line, a
// canonical semantic version such as v0.1.0.
func Version(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return "", err
	}
	v := string(bytes.TrimSpace(data))
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return "", fmt.Errorf("VERSION: %q is not a canonical semantic version (vMAJOR.MINOR.PATCH)", v)
	}
	return v, nil
}

// Root finds the repository root: the nearest directory at or above dir
// holding VERSION and a go.mod of module RootPath.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "VERSION")); err == nil {
			if f, err := ReadModFile(dir, "."); err == nil && f.Module != nil && f.Module.Mod.Path == RootPath {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("release: no repository root (VERSION beside the go.mod of " + RootPath + ") at or above the working directory")
		}
		dir = parent
	}
}

// CheckRequirements returns a description of each published nested
// module whose go.mod does not require every published module it depends
// on at version, or lacks the replace to its checkout that development
// uses.
func CheckRequirements(root, version string) ([]string, error) {
	mods, err := Modules(root)
	if err != nil {
		return nil, err
	}
	dirOf := map[string]string{}
	for _, m := range mods {
		dirOf[m.Path] = m.Dir
	}
	var problems []string
	for _, m := range mods {
		f, err := ReadModFile(root, m.Dir)
		if err != nil {
			return nil, err
		}
		for _, r := range f.Require {
			dep, ok := dirOf[r.Mod.Path]
			if !ok {
				continue
			}
			if r.Mod.Version != version {
				problems = append(problems, fmt.Sprintf("%s/go.mod requires %s %s, not the release version %s (VERSION)", m.Dir, r.Mod.Path, r.Mod.Version, version))
			}
			rel, err := filepath.Rel(filepath.Join(root, m.Dir), filepath.Join(root, dep))
			if err != nil {
				return nil, err
			}
			if !hasReplace(f, r.Mod.Path, filepath.ToSlash(rel)) {
				problems = append(problems, fmt.Sprintf("%s/go.mod has no `replace %s => %s` (development builds against the checkout)", m.Dir, r.Mod.Path, filepath.ToSlash(rel)))
			}
		}
	}
	return problems, nil
}

func hasReplace(f *modfile.File, path, dir string) bool {
	for _, r := range f.Replace {
		if r.Old.Path == path && r.Old.Version == "" && strings.TrimSuffix(r.New.Path, "/") == dir {
			return true
		}
	}
	return false
}
