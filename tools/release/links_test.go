package release

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// mdLink is a Markdown link or image target: ](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// docsPath is a repository path to a doc named in any text (docs/<name>.md).
	docsPath = regexp.MustCompile(`\bdocs/[A-Za-z0-9_./-]+\.md\b`)
)

// TestLinks: every relative link of every tracked Markdown file, and every
// docs/*.md path named in a tracked Markdown, Go or Makefile text, points
// at a file or directory that exists, so a moved document breaks a test,
// not a reader's click.
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	checked := 0
	for _, f := range strings.Split(string(out), "\x00") {
		md := strings.HasSuffix(f, ".md")
		if f == "" || !(md || strings.HasSuffix(f, ".go") || path.Base(f) == "Makefile") || !exists(f) {
			continue
		}
		if strings.Contains(f, "/testdata/") || strings.HasPrefix(f, "CHANGELOG") {
			continue // fixtures, and history that names documents as they were
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if md {
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				p := path.Join(path.Dir(f), target)
				checked++
				if !exists(p) {
					t.Errorf("%s: link %s: %s does not exist", f, m[1], p)
				}
			}
		}
		for _, p := range docsPath.FindAllString(text, -1) {
			checked++
			if !exists(p) {
				t.Errorf("%s: names %s, which does not exist", f, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no link checked")
	}
}
