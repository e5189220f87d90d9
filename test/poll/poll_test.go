package poll

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recorder stands in for the test that a helper fails.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls the helper as a test would, with a condition that holds when
// holds says and takes cost to check. It returns the helper's failure (""
// for none) and the times, since the start, of the checks.
func run(helper func(t testing.TB, cond func() (bool, string)), holds func(since time.Duration) bool, cost time.Duration) (string, []time.Duration) {
	r := &recorder{}
	start := time.Now()
	var checks []time.Duration
	cond := func() (bool, string) {
		at := time.Since(start)
		checks = append(checks, at)
		time.Sleep(cost)
		return holds(at), fmt.Sprintf("checked at %s", at)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(r, cond)
	}()
	<-done
	return r.failure, checks
}

func TestEventually(t *testing.T) {
	cases := map[string]struct {
		holds       func(since time.Duration) bool
		cost        time.Duration
		ctxTimeout  time.Duration
		wantFailure string
		wantChecks  []time.Duration
	}{
		"holds at once": {
			holds:      func(time.Duration) bool { return true },
			wantChecks: []time.Duration{0},
		},
		"comes true soon: checked often at first": {
			holds:      func(at time.Duration) bool { return at >= 60*time.Millisecond },
			wantChecks: ms(0, 10, 30, 70),
		},
		"comes true later: checked every 100 ms": {
			holds:      func(at time.Duration) bool { return at >= 300*time.Millisecond },
			wantChecks: ms(0, 10, 30, 70, 150, 250, 350),
		},
		"a costly check waits four times its cost": {
			holds:      func(at time.Duration) bool { return at >= 500*time.Millisecond },
			cost:       50 * time.Millisecond,
			wantChecks: ms(0, 250, 500),
		},
		"never": {
			holds:       func(time.Duration) bool { return false },
			wantFailure: "the thing: not reached within 1s; last state: checked at 950ms",
		},
		"the context ends first": {
			holds:       func(time.Duration) bool { return false },
			ctxTimeout:  200 * time.Millisecond,
			wantFailure: "the thing: stopped waiting after 200ms: context deadline exceeded; last state: checked at 150ms",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				if tc.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
					defer cancel()
				}
				failure, checks := run(func(r testing.TB, cond func() (bool, string)) {
					Eventually(r, ctx, time.Second, "the thing", cond)
				}, tc.holds, tc.cost)
				if diff := cmp.Diff(tc.wantFailure, failure); diff != "" {
					t.Errorf("failure (-want,+got):\n%s", diff)
				}
				if tc.wantChecks != nil {
					if diff := cmp.Diff(tc.wantChecks, checks); diff != "" {
						t.Errorf("checks (-want,+got):\n%s", diff)
					}
				}
			})
		})
	}
}

func TestConsistently(t *testing.T) {
	cases := map[string]struct {
		holds       func(since time.Duration) bool
		ctxTimeout  time.Duration
		wantFailure string
		wantChecks  []time.Duration
	}{
		"holds throughout: the last check is at the end": {
			holds:      func(time.Duration) bool { return true },
			wantChecks: ms(0, 10, 30, 70, 150, 250, 300),
		},
		"stops holding": {
			holds:       func(at time.Duration) bool { return at < 100*time.Millisecond },
			wantFailure: "the thing: did not hold after 150ms: checked at 150ms",
			wantChecks:  ms(0, 10, 30, 70, 150),
		},
		"the context ends first": {
			holds:       func(time.Duration) bool { return true },
			ctxTimeout:  100 * time.Millisecond,
			wantFailure: "the thing: stopped checking after 100ms: context deadline exceeded",
			wantChecks:  ms(0, 10, 30, 70),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				if tc.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
					defer cancel()
				}
				failure, checks := run(func(r testing.TB, cond func() (bool, string)) {
					Consistently(r, ctx, 300*time.Millisecond, "the thing", cond)
				}, tc.holds, 0)
				if diff := cmp.Diff(tc.wantFailure, failure); diff != "" {
					t.Errorf("failure (-want,+got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.wantChecks, checks); diff != "" {
					t.Errorf("checks (-want,+got):\n%s", diff)
				}
			})
		})
	}
}

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, n := range v {
		out[i] = time.Duration(n) * time.Millisecond
	}
	return out
}
