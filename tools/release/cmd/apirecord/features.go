package main

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// packageAPI returns the features of pkg's exported API, each line
// prefixed with "pkg <path>, ".
func packageAPI(pkg *types.Package) []string {
	w := &walker{pkg: pkg, prefix: "pkg " + pkg.Path() + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			w.emit("const %s %s", name, w.typ(o.Type()))
			w.emit("const %s = %s", name, o.Val().ExactString())
		case *types.Var:
			w.emit("var %s %s", name, w.typ(o.Type()))
		case *types.Func:
			w.emit("func %s%s", name, w.sig(o.Type().(*types.Signature)))
		case *types.TypeName:
			w.typeName(o)
		}
	}
	return w.lines
}

type walker struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

func (w *walker) emit(format string, args ...any) {
	w.lines = append(w.lines, w.prefix+fmt.Sprintf(format, args...))
}

// qualifier names other packages by their name, as Go's api files do.
func (w *walker) qualifier(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

// typ writes t; a func type (a field's, a variable's) without its
// parameter names.
func (w *walker) typ(t types.Type) string {
	if s, ok := t.(*types.Signature); ok {
		return "func" + w.sig(s)
	}
	return types.TypeString(t, w.qualifier)
}

// sig is a signature without the "func" keyword and without parameter
// names (renaming a parameter changes no caller), as Go's api files write
// it: (int, ...string) (T, error).
func (w *walker) sig(s *types.Signature) string {
	var b strings.Builder
	if tp := s.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			ps = append(ps, tp.At(i).Obj().Name()+" "+w.typ(tp.At(i).Constraint()))
		}
		b.WriteString("[" + strings.Join(ps, ", ") + "]")
	}
	b.WriteString("(" + w.tuple(s.Params(), s.Variadic()) + ")")
	switch r := s.Results(); r.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(r.At(0).Type()))
	default:
		b.WriteString(" (" + w.tuple(r, false) + ")")
	}
	return b.String()
}

func (w *walker) tuple(t *types.Tuple, variadic bool) string {
	parts := make([]string, t.Len())
	for i := range t.Len() {
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			parts[i] = "..." + w.typ(typ.(*types.Slice).Elem())
			continue
		}
		parts[i] = w.typ(typ)
	}
	return strings.Join(parts, ", ")
}

func (w *walker) typeName(o *types.TypeName) {
	name := o.Name()
	if o.IsAlias() {
		w.emit("type %s = %s", name, w.typ(o.Type()))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		return
	}
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			p := tp.At(i)
			ps = append(ps, p.Obj().Name()+" "+w.typ(p.Constraint()))
		}
		name += "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit("type %s struct", name)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				w.emit("type %s struct, embedded %s", name, w.typ(f.Type()))
			} else {
				w.emit("type %s struct, %s %s", name, f.Name(), w.typ(f.Type()))
			}
		}
	case *types.Interface:
		var ms []string
		unexported := false
		for i := range u.NumMethods() {
			m := u.Method(i)
			if !m.Exported() {
				unexported = true
				continue
			}
			ms = append(ms, m.Name())
			w.emit("type %s interface, %s%s", name, m.Name(), w.sig(m.Type().(*types.Signature)))
		}
		for i := range u.NumEmbeddeds() {
			if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
				w.emit("type %s interface, %s", name, w.typ(u.EmbeddedType(i))) // a constraint's type terms
			}
		}
		if unexported {
			ms = append(ms, "unexported methods")
		}
		slices.Sort(ms)
		w.emit("type %s interface { %s }", name, strings.Join(ms, ", "))
	default:
		w.emit("type %s %s", name, w.typ(u))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		s := m.Type().(*types.Signature)
		recv := o.Name()
		if _, ptr := s.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		w.emit("method (%s) %s%s", recv, m.Name(), w.sig(s))
	}
	// Methods promoted from embedded fields are the type's API too (an
	// unexported embedded type's exported methods included).
	if _, isStruct := named.Underlying().(*types.Struct); !isStruct {
		return
	}
	values := types.NewMethodSet(named)
	ptrs := types.NewMethodSet(types.NewPointer(named))
	for i := range ptrs.Len() {
		sel := ptrs.At(i)
		if len(sel.Index()) < 2 || !sel.Obj().Exported() {
			continue // declared on the type itself (above), or unexported
		}
		recv := "*" + o.Name()
		if values.Lookup(sel.Obj().Pkg(), sel.Obj().Name()) != nil {
			recv = o.Name()
		}
		w.emit("method (%s) %s%s", recv, sel.Obj().Name(), w.sig(sel.Obj().Type().(*types.Signature)))
	}
}
