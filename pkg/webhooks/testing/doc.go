// Package testing has builders for the objects the webhook tests admit that
// apis/*/testing does not cover (pods, Commands), and helpers to read the
// verdicts of the handlers.
package testing
