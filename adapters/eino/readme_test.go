package eino_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The main README's Eino program is complete (imports included), at most
// 25 lines, compiles and prints what the README says.
func TestReadmeProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	section := strings.Index(text, "\n## Eino\n")
	if section < 0 {
		t.Fatal("no Eino section in README.md")
	}
	text = text[section:]
	if end := strings.Index(text[1:], "\n## "); end >= 0 {
		text = text[:end+1]
	}
	start := strings.Index(text, "```go\npackage main")
	if start < 0 {
		t.Fatal("no Go program in README.md's Eino section")
	}
	prog := text[start+len("```go\n"):]
	prog = prog[:strings.Index(prog, "```")]
	if n := strings.Count(prog, "\n"); n > 25 {
		t.Fatalf("the README's program has %d lines, want at most 25", n)
	}
	dir, err := os.MkdirTemp(".", "_readme")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "./"+filepath.Base(dir)).CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "2 fetch" {
		t.Fatalf("output %q, want %q", got, "2 fetch")
	}
	if !strings.Contains(text, "It prints `2 fetch`") {
		t.Fatal("the README does not say what the program prints")
	}
}
