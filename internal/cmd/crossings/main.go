// Command crossings measures how tangled one part of a package is with
// the rest: it lists the unexported identifiers (package-level names,
// methods and struct fields) that files of one part declare and files of
// the other use, each with its use count and direction, then the number of
// distinct identifiers each way. It is the measure of the work left before
// the files of the first part can become a package of their own (every
// crossing must be exported, moved or designed away); exported names are
// not counted (a move only qualifies them).
//
//	go run ./internal/cmd/crossings work supervisor,admit,dispatch
//
// lists the crossings between work/supervisor.go, work/admit.go,
// work/dispatch.go and the other non-test files of work.
package main

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: crossings DIR FILE,FILE,... (file names without .go)")
		os.Exit(2)
	}
	part := map[string]bool{}
	for _, f := range strings.Split(os.Args[2], ",") {
		part[f+".go"] = true
	}
	cs, err := crossings(os.Args[1], part)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crossings:", err)
		os.Exit(1)
	}
	n := map[string]int{}
	for _, c := range cs {
		fmt.Printf("%s  %-50s %d\n", c.Dir, c.Name, c.Uses)
		n[c.Dir]++
	}
	fmt.Printf("the part uses %d unexported identifiers of the rest; the rest uses %d of the part's\n", n[partToRest], n[restToPart])
}

// The directions of a crossing.
const (
	partToRest = "part -> rest" // the part uses an identifier the rest declares
	restToPart = "rest -> part"
)

// crossing is one unexported identifier used across the line: Name (with
// its receiver for a method, "field." for a field) and the file that
// declares it, the direction and how many uses.
type crossing struct {
	Name, Dir string
	Uses      int
}

// crossings type-checks the non-test files of dir and returns the
// crossings between the files named in part and the others, sorted by
// direction and name.
func crossings(dir string, part map[string]bool) ([]crossing, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check("p", fset, files, info)
	if err != nil {
		return nil, err
	}
	inPart := func(p token.Pos) bool { return part[filepath.Base(fset.Position(p).Filename)] }
	cnt := map[crossing]int{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() || obj.Exported() || inPart(id.Pos()) == inPart(obj.Pos()) {
			continue
		}
		d := restToPart
		if inPart(id.Pos()) {
			d = partToRest
		}
		name := obj.Name()
		if v, ok := obj.(*types.Var); ok && v.IsField() {
			name = "field." + name
		}
		if f, ok := obj.(*types.Func); ok {
			if r := f.Type().(*types.Signature).Recv(); r != nil {
				name = types.TypeString(r.Type(), func(*types.Package) string { return "" }) + "." + name
			}
		}
		cnt[crossing{Name: name + " (" + filepath.Base(fset.Position(obj.Pos()).Filename) + ")", Dir: d}]++
	}
	var cs []crossing
	for c, n := range cnt {
		c.Uses = n
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b crossing) int {
		return cmp.Or(strings.Compare(a.Dir, b.Dir), strings.Compare(a.Name, b.Name))
	})
	return cs, nil
}
