package sharding

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/caldera-sh/caldera/pkg/controllers/sharding/core"
)

func TestLoadConfigExample(t *testing.T) {
	data, err := os.ReadFile("../../../examples/sharding/sharding-controller.conf")
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.Policy{
		{Name: "agent-scheduler", Band: true, MinUtilisation: 0.7, MaxUtilisation: 1, Prefer: labels.SelectorFromSet(labels.Set{WarmupLabel: "true"}), MinNodes: 1, MaxNodes: 100},
		{Name: "volcano", Band: true, MinUtilisation: 0, MaxUtilisation: 0.69, MinNodes: 1, MaxNodes: 100},
	}
	if diff := cmp.Diff(want, c.policies(), cmpopts.IgnoreFields(core.Policy{}, "Prefer")); diff != "" {
		t.Errorf("policies (-want,+got):\n%s", diff)
	}
	if p := c.policies()[0].Prefer; p == nil || !p.Matches(labels.Set{WarmupLabel: "true"}) {
		t.Errorf("agent-scheduler prefers %v, want warmup nodes", p)
	}
	if c.hysteresis() != 0.05 || c.resyncPeriod() != 10*time.Second {
		t.Errorf("hysteresis %g, resync %s", c.hysteresis(), c.resyncPeriod())
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml string
		want []string
	}{
		"no shards": {yaml: "hysteresis: 0.1\n", want: []string{"scheduler-configs: Required value: name at least one shard"}},
		"unknown field": {yaml: "scheduler-configs:\n- name: a\n  cpu-utilisation-min: 0.1\n",
			want: []string{`unknown field "cpu-utilisation-min"`}},
		"every rule": {yaml: `scheduler-configs:
- name: Agent
  cpu-utilization-min: 0.8
  cpu-utilization-max: 0.5
  min-nodes: 3
  max-nodes: 2
- name: Agent
  node-selector: "pool in (a"
- name: b
  node-selector: pool=b
  cpu-utilization-max: 0.5
hysteresis: 0.7
resync-period: 0s
`, want: []string{
			`scheduler-configs[0].name: Invalid value: "Agent": a lowercase RFC 1123 subdomain`,
			`scheduler-configs[0].cpu-utilization-max: Invalid value: 0.5: must not be below cpu-utilization-min (0.8)`,
			`scheduler-configs[0].min-nodes: Invalid value: 3: must not be above max-nodes (2)`,
			`scheduler-configs[1].name: Duplicate value: "Agent"`,
			`scheduler-configs[1].node-selector: Invalid value: "pool in (a"`,
			`scheduler-configs[2].node-selector: Forbidden: a shard takes nodes by node-selector or by cpu-utilization-min/max, not both`,
			`hysteresis: Invalid value: 0.7: must be between 0 and 0.5`,
			`resync-period: Invalid value: "0s": must be positive`,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
