package langchaingo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestMisuseAdapter: nil arguments to the adapter's constructors and
// Prepare, Retrofit of a nil agent, and nil options are refused with a
// stable error or ignored; never a panic or a hang.
func TestMisuseAdapter(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)
	llm := func() llms.Model { return scripted.New(scripted.Text("x")) }
	prepare := func(sup *work.Engine, m llms.Model, ts []tools.Tool, opts ...lc.Option) error {
		k, err := lc.Prepare(ctx, sup, m, ts, opts...)
		if err == nil {
			_ = k.Release()
		}
		return err
	}
	for _, tt := range []struct {
		name string
		f    func() error
		want error // nil: no error; errAny: any error
	}{
		{"typed nil engine", func() error { return prepare((*work.Engine)(nil), llm(), nil) }, middleware.ErrNilEngine},
		{"zero Portable engine", func() error {
			return prepare(driver.NewEngine(new(driver.Portable)), llm(), []tools.Tool{lc.Backgroundable(misEcho("job"))})
		}, middleware.ErrEngineNotReady},
		{"nil model", func() error { return prepare(sup, nil, nil) }, lc.ErrNilModel},
		{"nil Option and ChildOption", func() error {
			return prepare(sup, llm(), []tools.Tool{misEcho("a", nil)}, nil)
		}, nil},
		{"NewFunction with a nil fn", func() error {
			return prepare(sup, llm(), []tools.Tool{lc.NewFunction("f", "d", nil)})
		}, middleware.ErrInvalidChild},
		{"NewFunction with a nil fn, called directly", func() error {
			_, err := lc.NewFunction("f", "d", nil).Call(ctx, "x")
			return err
		}, errAny},
		{"NewAgent with a nil build", func() error {
			return prepare(sup, llm(), []tools.Tool{lc.NewAgent("a", "d", nil)})
		}, lc.ErrInvalidChild},
		{"NewAgent with a nil build, called directly", func() error {
			_, err := lc.NewAgent("a", "d", nil).Call(ctx, "x")
			return err
		}, lc.ErrInvalidChild},
		{"NewTypedJob with a nil submit", func() error {
			return prepare(sup, llm(), []tools.Tool{lc.Backgroundable(lc.NewTypedJob[struct{}]("j", "d", nil, nil, work.Job{}))})
		}, lc.ErrInvalidChild},
		{"NewJob of the zero Job", func() error {
			return prepare(sup, llm(), []tools.Tool{lc.Backgroundable(lc.NewJob("j", "d", work.Job{}))})
		}, middleware.ErrInvalidChild},
		{"WithValidate(nil)", func() error {
			return prepare(sup, llm(), []tools.Tool{misEcho("a", lc.WithValidate(nil))})
		}, nil},
		{"Retrofit of a nil agent", func() error { _, _, err := lc.Retrofit(ctx, sup, nil); return err }, errAny},
		{"Retrofit of a typed nil agent", func() error {
			_, _, err := lc.Retrofit(ctx, sup, (*agents.OpenAIFunctionsAgent)(nil))
			return err
		}, errAny},
		{"WrapModel(nil)", func() error { _, err := lc.WrapModel(nil).GenerateContent(ctx, nil); return err }, lc.ErrZeroModel},
		{"ProviderName(nil), ResponseUsage(nil)", func() error {
			if lc.ProviderName(nil) != "" {
				return errors.New("ProviderName(nil) names a provider")
			}
			if _, _, ok := lc.ResponseUsage(nil); ok {
				return errors.New("ResponseUsage(nil) reports usage")
			}
			return nil
		}, nil},
		{"RunUntilSettled with a nil chain", func() error {
			k, err := lc.Prepare(ctx, sup, llm(), nil)
			if err != nil {
				return err
			}
			defer k.Release()
			_, err = k.RunUntilSettled(ctx, nil, "go")
			return err
		}, errAny},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			enginetest.NoHang(t, tt.name, func() { err = tt.f() })
			switch {
			case tt.want == errAny:
				if err == nil || !strings.HasPrefix(err.Error(), "langchaingo: ") && !errors.Is(err, middleware.ErrNilRun) {
					t.Fatalf("%s = %v, want a langchaingo error", tt.name, err)
				}
			case tt.want == nil && err != nil, tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("%s = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

// errAny marks a probe whose error has no sentinel: any error of the
// package (its message starts "langchaingo: ") is right, a panic is not.
var errAny = errors.New("any error")
