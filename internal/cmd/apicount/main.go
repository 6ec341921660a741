// Command apicount prints how many exported names each package directory
// given on the command line declares, as `go doc -all` shows them: each
// exported type, function and method, and each name of a const or var
// (each member of a block counted); struct fields and interface methods
// are not counted. Test files are left out.
//
//	go run ./internal/cmd/apicount work runners/temporal
package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
)

func main() {
	status := 0
	for _, dir := range os.Args[1:] {
		n, err := count(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			status = 1
			continue
		}
		fmt.Printf("%s\t%d\n", dir, n)
	}
	os.Exit(status)
}

func count(dir string) (int, error) {
	fset := token.NewFileSet()
	bp, err := build.ImportDir(dir, 0) // the files the build would use (build tags applied), tests left out
	if err != nil {
		return 0, err
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return 0, err
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, bp.ImportPath)
	if err != nil {
		return 0, err
	}
	total := 0
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				if ast.IsExported(n) {
					total++
				}
			}
		}
	}
	values(d.Consts)
	values(d.Vars)
	total += len(d.Funcs)
	for _, t := range d.Types {
		total++ // the type
		values(t.Consts)
		values(t.Vars)
		total += len(t.Funcs) + len(t.Methods)
	}
	return total, nil
}
