package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	schedapp "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	schedoptions "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app/options"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/test/poll"
)

// Explanations reads what a running scheduler last concluded about each
// job it could not (fully) place, with the start of the cycle that
// concluded it. A test that claims the scheduler leaves something as it is
// waits for a conclusion drawn after the change, rather than sleeping.
type Explanations struct {
	url string
}

// StartSchedulerExplained runs caldera-scheduler as StartScheduler does,
// until the test ends, and also serves its explanations (with its metrics)
// on a free loopback port.
func (f *Framework) StartSchedulerExplained(t testing.TB, configYAML string) *Explanations {
	t.Helper()
	cfg, err := config.Load([]byte(configYAML), profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientConnection.Kubeconfig = f.Kubeconfig()
	cfg.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", port)
	stop := runInProcess("scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, &schedoptions.Config{Configuration: cfg}) })
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return &Explanations{url: fmt.Sprintf("http://127.0.0.1:%d%s", port, scheduler.ExplainPath)}
}

// List returns every job's latest explanation.
func (x *Explanations) List(ctx context.Context) ([]scheduler.Explanation, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, x.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading explanations: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading explanations: %s", resp.Status)
	}
	var out []scheduler.Explanation
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decoding explanations: %w", err)
	}
	return out, nil
}

// JudgedSince waits until the scheduler has explained each of the jobs
// (PodGroups, as "namespace/name") in a cycle that started at or after
// since, and returns those explanations by job. A job the scheduler placed
// meanwhile has no explanation: the wait fails, naming it.
func (x *Explanations) JudgedSince(t testing.TB, timeout time.Duration, since time.Time, jobs ...string) map[string]scheduler.Explanation {
	t.Helper()
	var got map[string]scheduler.Explanation
	poll.Eventually(t, t.Context(), timeout, fmt.Sprintf("%d jobs explained by a cycle since %s", len(jobs), since.Format(time.RFC3339Nano)), func() (bool, string) {
		list, err := x.List(context.Background())
		if err != nil {
			return false, err.Error()
		}
		got = map[string]scheduler.Explanation{}
		for _, e := range list {
			got[e.Namespace+"/"+e.Name] = e
		}
		var stale []string
		for _, j := range jobs {
			e, ok := got[j]
			switch {
			case !ok:
				stale = append(stale, j+": none")
			case e.Cycle.Before(since):
				stale = append(stale, fmt.Sprintf("%s: from the cycle of %s", j, e.Cycle.Format(time.RFC3339Nano)))
			}
		}
		slices.Sort(stale)
		if len(stale) > 10 {
			stale = append(stale[:10], fmt.Sprintf("and %d more", len(stale)-10))
		}
		return len(stale) == 0, strings.Join(stale, "; ")
	})
	out := make(map[string]scheduler.Explanation, len(jobs))
	for _, j := range jobs {
		out[j] = got[j]
	}
	return out
}
