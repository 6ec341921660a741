package driver

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// TestUnusablePortable: with Config.Unusable every method of a Portable
// given well-formed arguments answers that error (an invalid option's
// first, for the admissions), and its Store is never called; Close
// closes. A method added later is called too.
func TestUnusablePortable(t *testing.T) {
	down := Detail(work.ErrUnavailable, "no client")
	limits, err := ResolveLimits()
	if err != nil {
		t.Fatal(err)
	}
	var p Portable
	Init(&p, onlyAdmissible{}, Config{Limits: limits, PollInterval: time.Millisecond, Unusable: down})
	o := work.NewOwner("o")
	spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "out", nil }}
	args := map[reflect.Type]reflect.Value{
		reflect.TypeFor[context.Context](): reflect.ValueOf(context.Background()),
		reflect.TypeFor[work.Owner]():      reflect.ValueOf(o),
		reflect.TypeFor[string]():          reflect.ValueOf(NewID()),
		reflect.TypeFor[work.Spec]():       reflect.ValueOf(spec),
		reflect.TypeFor[work.Budget]():     reflect.ValueOf(work.Budget{MaxTurns: 1}),
		reflect.TypeFor[int]():             reflect.ValueOf(1),
		reflect.TypeFor[time.Duration]():   reflect.ValueOf(time.Duration(0)),
	}
	v := reflect.ValueOf(&p)
	errType := reflect.TypeFor[error]()
	called := 0
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		mt := m.Type()
		if name == "Close" || mt.NumOut() == 0 || mt.Out(mt.NumOut()-1) != errType {
			continue // Observer, Now: no error to answer; Close: below
		}
		in := make([]reflect.Value, mt.NumIn())
		for j := range in {
			a, ok := args[mt.In(j)]
			if !ok {
				t.Fatalf("%s takes a %v: give the test a well-formed one", name, mt.In(j))
			}
			in[j] = a
		}
		if name == "Approve" || name == "Deny" || name == "Pending" {
			in[1] = reflect.ValueOf(work.Approver())
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s on an unusable Portable panics: %v", name, r)
				}
			}()
			out := m.Call(in)
			called++
			if err, _ := out[len(out)-1].Interface().(error); !errors.Is(err, down) {
				t.Errorf("%s on an unusable Portable: %v, want its Unusable error", name, err)
			}
		}()
	}
	if called < 20 {
		t.Errorf("%d methods called; want every method of the contract", called)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close = %v", err)
	}

	// An invalid option's error comes first in the admissions.
	bad := Detail(work.ErrInvalidLimit, "WithMaxRunning(-1)")
	var q Portable
	Init(&q, onlyAdmissible{err: bad}, Config{Limits: limits, PollInterval: time.Millisecond, Unusable: down})
	defer q.Close(context.Background())
	if _, err := q.Start(context.Background(), spec); !errors.Is(err, bad) {
		t.Errorf("Start = %v, want the invalid option's error first", err)
	}
	if err := q.SetPool(context.Background(), o, work.Budget{MaxTurns: 1}); !errors.Is(err, bad) {
		t.Errorf("SetPool = %v, want the invalid option's error first", err)
	}
}

// onlyAdmissible is a Store of which only Admissible may be called (it
// answers err): any other call panics (a nil Store), which an unusable
// Portable must never make.
type onlyAdmissible struct {
	Store
	err error
}

func (s onlyAdmissible) Admissible() error { return s.err }
