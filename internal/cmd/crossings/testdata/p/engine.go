package p

type engine struct{ n int }

func (e *engine) start() int { return helper(e.n) + Exported }

func newEngine() *engine { return &engine{} }
