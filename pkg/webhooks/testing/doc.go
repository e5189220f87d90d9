// Package testing has helpers to read the verdicts of the webhooks'
// handlers. The objects they admit are built with apis/*/testing and, for
// pods, pkg/scheduler/testing.
package testing
