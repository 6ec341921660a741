// Command copies finds code written twice across groups of Go files: a
// run of at least -lines consecutive lines (blank lines, comments and
// imports left out) that stands in two groups, identical or differing
// only in names and literal values. Each argument is a group: the
// non-test .go files of a directory, or of several separated by commas;
// copies within a group are not counted. A run must hold at least -tokens
// tokens, so that runs of closing braces and bare returns do not count.
//
//	go run ./internal/cmd/copies -max 0 runners/temporal runners/restate work,work/driver
//
// The house options pattern (DESIGN.md: an Option interface over an
// unexported config, as otelhttp and goleak declare it) is written in
// every package that has options, by design, so its three lines are left
// out as comments are (housePattern); nothing else is exempt.
//
// It prints one line per copy (the first place in each group) and exits
// 1 when it finds more than -max copies; -max is the ratchet that make
// lint holds, lowered as copies are removed.
package main

import (
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type line struct {
	file  string
	no    int
	norm  string
	count int // tokens
}

type place struct {
	group int
	file  string
	from  int
	to    int
}

func main() {
	minLines := flag.Int("lines", 6, "consecutive lines a copy spans at least")
	minTokens := flag.Int("tokens", 40, "tokens a copy holds at least")
	limit := flag.Int("max", 0, "copies allowed (the ratchet); more exit 1")
	flag.Parse()
	groups := flag.Args()
	if len(groups) < 2 {
		fmt.Fprintln(os.Stderr, "copies: name at least two directories")
		os.Exit(2)
	}
	seen := map[string][]place{} // window key -> its places
	for g, dirs := range groups {
		var files []string
		for _, dir := range strings.Split(dirs, ",") {
			fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil || len(fs) == 0 {
				fmt.Fprintf(os.Stderr, "copies: no Go files in %s\n", dir)
				os.Exit(2)
			}
			files = append(files, fs...)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			lines, err := normalise(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			for i := 0; i+*minLines <= len(lines); i++ {
				w := lines[i : i+*minLines]
				toks := 0
				keys := make([]string, len(w))
				for j, l := range w {
					toks += l.count
					keys[j] = l.norm
				}
				if toks < *minTokens {
					continue
				}
				k := strings.Join(keys, "\n")
				seen[k] = append(seen[k], place{g, f, w[0].no, w[len(w)-1].no})
			}
		}
	}
	// A copy: a window standing in two groups. Overlapping windows of the
	// same pair of files merge into one copy.
	type pairKey struct{ a, b string }
	copies := map[pairKey][]place{}
	for _, ps := range seen {
		for i := range ps {
			for j := i + 1; j < len(ps); j++ {
				a, b := ps[i], ps[j]
				if a.group == b.group {
					continue
				}
				if a.file > b.file {
					a, b = b, a
				}
				k := pairKey{a.file, b.file}
				prev := copies[k]
				merged := false
				for n := 0; n+1 < len(prev); n += 2 {
					if a.from <= prev[n].to+1 && a.to >= prev[n].from-1 && b.from <= prev[n+1].to+1 && b.to >= prev[n+1].from-1 {
						prev[n].from, prev[n].to = min(prev[n].from, a.from), max(prev[n].to, a.to)
						prev[n+1].from, prev[n+1].to = min(prev[n+1].from, b.from), max(prev[n+1].to, b.to)
						merged = true
						break
					}
				}
				if !merged {
					copies[k] = append(prev, a, b)
				}
			}
		}
	}
	var out []string
	for _, ps := range copies {
		for n := 0; n+1 < len(ps); n += 2 {
			out = append(out, fmt.Sprintf("%s:%d-%d ~ %s:%d-%d", ps[n].file, ps[n].from, ps[n].to, ps[n+1].file, ps[n+1].from, ps[n+1].to))
		}
	}
	sort.Strings(out)
	for _, o := range out {
		fmt.Println(o)
	}
	fmt.Printf("copies: %d across %s (allowed %d)\n", len(out), strings.Join(groups, ", "), *limit)
	if len(out) > *limit {
		os.Exit(1)
	}
}

// normalise returns f's code lines with identifiers and literals folded
// (names and values do not matter), comments, blank lines and the
// package clause and imports left out.
func normalise(f string) ([]line, error) {
	src, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	file := fset.AddFile(f, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	var lines []line
	cur := line{file: f}
	inImport, depth := false, 0
	flush := func() {
		if cur.count > 0 {
			lines = append(lines, cur)
		}
		cur = line{file: f}
	}
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON {
			continue // inserted at line ends
		}
		no := fset.Position(pos).Line
		if no != cur.no {
			flush()
			cur.no = no
		}
		switch {
		case tok == token.PACKAGE:
			inImport = true // skip the clause's name too
			continue
		case tok == token.IMPORT:
			inImport = true
			continue
		case inImport:
			switch tok {
			case token.LPAREN:
				depth++
			case token.RPAREN:
				depth--
			}
			if depth == 0 && tok != token.LPAREN {
				inImport = tok == token.LPAREN
			}
			if depth > 0 || tok == token.RPAREN || tok == token.STRING || tok == token.IDENT || tok == token.PERIOD {
				continue
			}
			inImport = false
		}
		var t string
		switch {
		case tok == token.IDENT:
			t = "I"
		case tok.IsLiteral():
			t = "L"
		default:
			t = tok.String()
		}
		cur.norm += t + " "
		cur.count++
	}
	flush()
	text := strings.Split(string(src), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !housePattern[strings.TrimSpace(text[l.no-1])] {
			kept = append(kept, l)
		}
	}
	return kept, nil
}

// housePattern are the lines of the house options pattern, exactly.
var housePattern = map[string]bool{
	"type Option interface{ apply(*config) }":       true,
	"type optionFunc func(*config)":                 true,
	"func (f optionFunc) apply(c *config) { f(c) }": true,
}
