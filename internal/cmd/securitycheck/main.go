// Command securitycheck checks that every test SECURITY.md names exists,
// so that a guarantee the threat model states cannot outlive its test.
// A reference is `directory:Name` in backquotes: a Test, Fuzz or Example
// function declared in a _test.go file of that directory, or a case of a
// conformance suite (a {"Name", ...} entry of the directory's case
// tables, as in work/enginetest).
//
//	go run ./internal/cmd/securitycheck SECURITY.md
//
// It prints each missing reference and exits 1 when there is one, or
// when the file names no test at all.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var ref = regexp.MustCompile("`([a-z0-9_./-]+):([A-Z][A-Za-z0-9_]*)`")

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: securitycheck SECURITY.md")
		os.Exit(2)
	}
	missing, n, err := check(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "securitycheck:", err)
		os.Exit(2)
	}
	for _, m := range missing {
		fmt.Println(m)
	}
	fmt.Printf("securitycheck: %d tests named, %d missing\n", n, len(missing))
	if len(missing) > 0 || n == 0 {
		os.Exit(1)
	}
}

// check returns the references of the file at path (relative to the
// file's directory) that name no test, and how many it names.
func check(path string) (missing []string, n int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	root := filepath.Dir(path)
	for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
		n++
		ok, err := declared(filepath.Join(root, m[1]), m[2])
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			missing = append(missing, m[1]+":"+m[2]+": no such test")
		}
	}
	return missing, n, nil
}

// declared reports whether dir declares name: a test function in a
// _test.go file, or a suite case in any .go file.
func declared(dir, name string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		return false, err
	}
	fn := regexp.MustCompile(`(?m)^func ` + name + `\(`)
	isFunc := strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Fuzz") || strings.HasPrefix(name, "Example")
	for _, f := range files {
		if isFunc != strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if isFunc && fn.Match(b) || !isFunc && strings.Contains(string(b), `{"`+name+`", `) {
			return true, nil
		}
	}
	return false, nil
}
