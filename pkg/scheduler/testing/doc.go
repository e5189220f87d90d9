// Package testing holds fluent builders of the objects scheduler tests use.
package testing
