package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/agentwork/agentwork/tools/release"
)

// zipped is one module version in the proxy.
type zipped struct {
	mod   release.Module
	files int
	bytes int64
}

// gitFiles lists the files under dir (relative to the repository root)
// that a commit would hold: tracked ones that still exist and untracked
// ones git does not ignore, as slash paths relative to the root.
func gitFiles(root, dir string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files %s: %w", dir, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink (never in a module zip)
		}
		files = append(files, p)
	}
	return files, nil
}

type file struct {
	rel, abs string
	info     os.FileInfo
}

func (f file) Path() string                 { return f.rel }
func (f file) Lstat() (os.FileInfo, error)  { return f.info, nil }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

// buildProxy writes every published module at version into dir, laid out
// as a GOPROXY (<escaped path>/@v/{list,<v>.info,<v>.mod,<v>.zip}), from
// the working tree's files, and checks each zip: LICENSE at its root, no
// file of another module.
func buildProxy(root, version, dir string, mods []release.Module) ([]zipped, error) {
	all, err := gitFiles(root, ".")
	if err != nil {
		return nil, err
	}
	var moduleDirs []string // every directory holding a go.mod, the root's ""
	for _, p := range all {
		if path.Base(p) == "go.mod" {
			moduleDirs = append(moduleDirs, strings.TrimSuffix(path.Dir(p), "."))
		}
	}
	var out []zipped
	for _, m := range mods {
		prefix := ""
		if m.Dir != "." {
			prefix = m.Dir + "/"
		}
		var files []modzip.File
		for _, p := range all {
			if !strings.HasPrefix(p, prefix) {
				continue
			}
			abs := filepath.Join(root, filepath.FromSlash(p))
			fi, err := os.Lstat(abs)
			if err != nil {
				return nil, err
			}
			files = append(files, file{rel: strings.TrimPrefix(p, prefix), abs: abs, info: fi})
		}
		mv := module.Version{Path: m.Path, Version: version}
		var buf bytes.Buffer
		if err := modzip.Create(&buf, mv, files); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Dir, err)
		}
		n, err := checkZip(buf.Bytes(), mv, m.Dir, moduleDirs)
		if err != nil {
			return nil, err
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return nil, err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return nil, err
		}
		gomod, err := os.ReadFile(filepath.Join(root, m.Dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		info, _ := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
		for name, data := range map[string][]byte{
			"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod, version + ".zip": buf.Bytes(),
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return nil, err
			}
		}
		out = append(out, zipped{mod: m, files: n, bytes: int64(buf.Len())})
	}
	return out, nil
}

// checkZip reads a module zip back: it must hold LICENSE and go.mod at its
// root, and no file under another module's directory.
func checkZip(data []byte, mv module.Version, dir string, moduleDirs []string) (int, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, err
	}
	base := mv.Path + "@" + mv.Version + "/"
	own := ""
	if dir != "." {
		own = dir + "/"
	}
	has := map[string]bool{}
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, base)
		if !ok {
			return 0, fmt.Errorf("%s: zip entry %s is outside %s", dir, f.Name, base)
		}
		has[rel] = true
		for _, md := range moduleDirs {
			if md == "" || md+"/" == own {
				continue
			}
			if other, ok := strings.CutPrefix(md+"/", own); ok && strings.HasPrefix(rel, other) {
				return 0, fmt.Errorf("%s: zip holds %s, a file of the module at %s", dir, rel, md)
			}
		}
	}
	for _, need := range []string{"LICENSE", "go.mod"} {
		if !has[need] {
			return 0, fmt.Errorf("%s@%s: the zip has no %s", mv.Path, mv.Version, need)
		}
	}
	return len(zr.File), nil
}
