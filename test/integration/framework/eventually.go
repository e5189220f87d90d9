package framework

import (
	"context"
	"testing"
	"time"
)

// Eventually polls cond every 100ms until it holds, failing the test with
// the last state cond reported when timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached within %s; last state: %s", what, timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
