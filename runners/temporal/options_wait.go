package temporal

// WithPollsPerRun sets how many polls a waiting job's workflow makes
// before it continues as new, carrying the job's handle, backoff, error
// count and deadline (default 500: a job polled at the
// 30 s cap continues about every four hours, its history far below
// Temporal's limits). Values below 1 are ignored. It is the coordinator's
// option: it travels in the Work's input.
func WithPollsPerRun(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.pollsPerRun = n
		}
	})
}
