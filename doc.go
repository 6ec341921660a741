// Package agentwork runs langchaingo agent work in the background,
// observably. See the work, middleware, telemetry and adapters/langchaingo
// packages; this root package holds only repository-wide tests.
package agentwork
