// Package poll is how integration and end-to-end tests wait on a cluster:
// Eventually for a condition to come true, Consistently for one to stay
// true for a while. Both fail the test with the caller's description and
// the last state the condition reported.
package poll

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Between checks the helpers wait 10 ms at first, doubling up to 100 ms,
// and never less than four times what the last check took: a condition
// that comes true soon is seen soon, an API server under test is read at
// most ten times a second, and a costly check (a kubectl run, lists across
// clusters) takes at most a fifth of the time.
const (
	firstWait = 10 * time.Millisecond
	maxWait   = 100 * time.Millisecond
	costRatio = 4
)

// pacer spaces the checks.
type pacer struct{ wait time.Duration }

// next returns how long to wait after a check that took took.
func (p *pacer) next(took time.Duration) time.Duration {
	if p.wait == 0 {
		p.wait = firstWait
	} else {
		p.wait = min(2*p.wait, maxWait)
	}
	return max(p.wait, costRatio*took)
}

// Eventually checks cond until it holds, and fails the test if it does
// not within timeout or before ctx ends. what names what is awaited; cond
// returns whether it holds and, if not, the state it saw.
func Eventually(t testing.TB, ctx context.Context, timeout time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	if err := Until(ctx, timeout, what, cond); err != nil {
		t.Fatalf("%v", err)
	}
}

// Until is Eventually for code that is not a test (the perf harness): it
// returns the error Eventually would fail the test with.
func Until(ctx context.Context, timeout time.Duration, what string, cond func() (ok bool, state string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var p pacer
	for {
		began := time.Now()
		ok, state := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if time.Since(start) >= timeout {
				return fmt.Errorf("%s: not reached within %s; last state: %s", what, timeout, state)
			}
			return fmt.Errorf("%s: stopped waiting after %s: %v; last state: %s", what, time.Since(start).Round(time.Millisecond), context.Cause(ctx), state)
		case <-time.After(p.next(time.Since(began))):
		}
	}
}

// Consistently checks cond for d, and fails the test the first time it
// does not hold. It is for checks that something stays true while time
// passes; it is no barrier: it cannot tell whether whatever could change
// cond has happened, only that cond held whenever it looked, the last
// time after d.
func Consistently(t testing.TB, ctx context.Context, d time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	start := time.Now()
	end := start.Add(d)
	var p pacer
	for {
		began := time.Now()
		ok, state := cond()
		if !ok {
			t.Fatalf("%s: did not hold after %s: %s", what, time.Since(start).Round(time.Millisecond), state)
		}
		if !time.Now().Before(end) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: stopped checking after %s: %v", what, time.Since(start).Round(time.Millisecond), context.Cause(ctx))
		case <-time.After(min(p.next(time.Since(began)), time.Until(end))):
		}
	}
}
