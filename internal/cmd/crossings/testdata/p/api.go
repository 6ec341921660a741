package p

// Exported is used by the engine: exported names are not crossings.
const Exported = 1

func helper(n int) int { return n + 1 }

// Run uses the engine's unexported constructor, method and field.
func Run() int {
	e := newEngine()
	e.n = 2
	return e.start()
}
