package middleware

import "time"

// Option configures PrepareWith. A nil Option is ignored.
type Option interface{ apply(*config) }

// config is what the Options set; its zero value is the default: no
// extra tool names, no auto-background default.
type config struct {
	extra []string
	// auto is WithAutoBackground's bound; autoSet reports that it was
	// given (a zero or negative bound fails PrepareWith).
	auto    time.Duration
	autoSet bool
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithExtraTools names tools the agent gets from elsewhere (for example its
// resolved prompt), as PrepareContext's extra does: a "work" among them (in
// any case) fails preparation when the work tool is added. Repeated, the
// names add up.
func WithExtraTools(names ...string) Option {
	return optionFunc(func(c *config) { c.extra = append(c.extra, names...) })
}

// WithAutoBackground is the Kit's default Child.AutoBackground: every
// backgroundable child without its own moves a call made without
// run_in_background to the background when it is still unfinished after
// the bound (an opt-in departure from the crux contract; see
// Child.AutoBackground). Foreground children are not affected; a child
// with BackgroundByDefault never waits (absent means background). A bound
// of zero or less fails PrepareWith (ErrInvalidBackgroundOption); the last
// WithAutoBackground wins.
func WithAutoBackground(after time.Duration) Option {
	return optionFunc(func(c *config) { c.auto, c.autoSet = after, true })
}
