package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

const example = `{
  "globalConfig": {
    "cpuQosConfig": {"enable": true},
    "cpuBurstConfig": {"enable": true},
    "memoryQosConfig": {"enable": true},
    "overSubscriptionConfig": {"enable": true, "overSubscriptionTypes": "cpu,memory", "ratio": 0.5},
    "evictingConfig": {"evictingCPUHighWatermark": 70, "evictingMemoryHighWatermark": 70}
  },
  "nodesConfig": [
    {"selector": {"matchLabels": {"pool": "gpu"}},
     "overSubscriptionConfig": {"overSubscriptionTypes": "cpu"},
     "cpuQosConfig": {"weights": {"LS": 800}}},
    {"selector": {"matchLabels": {"pool": "gpu", "zone": "a"}},
     "evictingConfig": {"evictingCPUHighWatermark": 90, "minInterval": "30s"}}
  ]
}`

func TestForNode(t *testing.T) {
	c, err := Parse([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	base := Node{
		CPUQoS: true, CPUBurst: true, MemoryQoS: true, HighRatio: 0.9,
		Weights:          map[qos.Class]int64{qos.LatencyCritical: 1000, qos.HighlyLatencySensitive: 1000, qos.LatencySensitive: 500, qos.BestEffort: 1},
		OverSubscription: true, OverCPU: true, OverMemory: true, Ratio: 0.5, SafetyMargin: 0.05,
		Evicting: true, CPUHighWatermark: 70, MemoryHighWatermark: 70, CPULowWatermark: 30, MemoryLowWatermark: 30,
		MinEvictionInterval: 10 * time.Second,
	}
	gpu := base
	gpu.OverMemory = false
	gpu.Weights = map[qos.Class]int64{qos.LatencyCritical: 1000, qos.HighlyLatencySensitive: 1000, qos.LatencySensitive: 800, qos.BestEffort: 1}
	gpuA := gpu
	gpuA.CPUHighWatermark, gpuA.MinEvictionInterval = 90, 30*time.Second
	for name, tc := range map[string]struct {
		labels map[string]string
		want   Node
	}{
		"no selector matches": {labels: map[string]string{"pool": "cpu"}, want: base},
		"one matches":         {labels: map[string]string{"pool": "gpu"}, want: gpu},
		"both match, in turn": {labels: map[string]string{"pool": "gpu", "zone": "a"}, want: gpuA},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := c.ForNode(tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
	var none *Configuration
	if got, err := none.ForNode(nil); err != nil || got.OverSubscription != true || got.CPUQoS || got.CPUHighWatermark != 80 {
		t.Errorf("no configuration: %+v, %v; want the defaults", got, err)
	}
}

func TestInvalid(t *testing.T) {
	for name, tc := range map[string]struct {
		in, err string
	}{
		"ratio above 1": {
			in:  `{"globalConfig": {"overSubscriptionConfig": {"ratio": 1.5}}}`,
			err: "globalConfig.overSubscriptionConfig.ratio: Invalid value: 1.5: must be greater than 0 and at most 1",
		},
		"negative watermark": {
			in:  `{"nodesConfig": [{"selector": {}, "evictingConfig": {"evictingCPUHighWatermark": -5}}]}`,
			err: "nodesConfig[0].evictingConfig.evictingCPUHighWatermark: Invalid value: -5: must be a percentage greater than 0 and at most 100",
		},
		"unknown QoS class": {
			in:  `{"globalConfig": {"cpuQosConfig": {"weights": {"GOLD": 100}}}}`,
			err: `globalConfig.cpuQosConfig.weights[GOLD]: Unsupported value: "GOLD": supported values: "LC", "HLS", "LS", "BE"`,
		},
		"unknown resource type": {
			in:  `{"globalConfig": {"overSubscriptionConfig": {"overSubscriptionTypes": "cpu,gpu"}}}`,
			err: `overSubscriptionTypes: Invalid value: "cpu,gpu": unknown resource "gpu"`,
		},
		"misspelled field": {
			in:  `{"globalConfig": {"evictingConfig": {"evictingCPUHighWatermak": 70}}}`,
			err: `unknown field "evictingCPUHighWatermak"`,
		},
		"network QoS": {
			in:  `{"globalConfig": {"networkQosConfig": {"enable": true}}}`,
			err: "network QoS is not available in this version",
		},
		"bad selector": {
			in:  `{"nodesConfig": [{"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}]}`,
			err: "nodesConfig[0].selector: Invalid value",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
	c, err := Parse([]byte(`{"globalConfig": {"evictingConfig": {"evictingCPULowWatermark": 50}},
		"nodesConfig": [{"selector": {"matchLabels": {"pool": "gpu"}}, "evictingConfig": {"evictingCPUHighWatermark": 40}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ForNode(map[string]string{"pool": "gpu"}); err == nil ||
		err.Error() != "evictingCPULowWatermark 50 is above evictingCPUHighWatermark 40 (from defaults < globalConfig < nodesConfig[0])" {
		t.Errorf("crossed watermarks: %v", err)
	}
}

// TestOverSubscriptionLabel: the node's label turns lending on or off
// whatever the configuration says, and puts the node under the agent.
func TestOverSubscriptionLabel(t *testing.T) {
	off, err := Parse([]byte(`{"globalConfig": {"overSubscriptionConfig": {"enable": false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		c      *Configuration
		labels map[string]string
		want   bool
	}{
		"configuration off, label on": {off, map[string]string{OverSubscriptionLabel: "true"}, true},
		"configuration on, label off": {nil, map[string]string{OverSubscriptionLabel: "false"}, false},
		"no label":                    {off, nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			n, err := tc.c.ForNode(tc.labels)
			if err != nil || n.OverSubscription != tc.want {
				t.Errorf("OverSubscription = %v (%v), want %v", n.OverSubscription, err, tc.want)
			}
		})
	}
	if !Colocated(map[string]string{OverSubscriptionLabel: "true"}) || !Colocated(map[string]string{ColocationLabel: "true"}) || Colocated(nil) {
		t.Error("Colocated does not follow the labels")
	}
}
