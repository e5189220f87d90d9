package v1alpha1

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testRegistry holds the plugins and actions the tests treat as
// implemented: the core plugins and every known action.
var testRegistry = NameRegistry{
	Plugins: []string{
		GangPlugin, PriorityPlugin, DRFPlugin, ProportionPlugin, CapacityPlugin, PredicatesPlugin,
		NodeOrderPlugin, BinpackPlugin, ConformancePlugin, OvercommitPlugin,
	},
	Actions: KnownActions(),
}

const knownPluginsList = `"binpack", "capacity", "capacity-card", "cdp", "conformance", "deviceshare", "drf", "extender", "gang", "network-topology-aware", "nodegroup", "nodeorder", "numa-aware", "overcommit", "pdb", "predicates", "priority", "proportion", "rescheduling", "resource-strategy-fit", "resourcequota", "sla", "task-topology", "tdm", "usage"`

const availablePluginsList = `"binpack", "capacity", "conformance", "drf", "gang", "nodeorder", "overcommit", "predicates", "priority", "proportion"`

// rawArgs encodes typed arguments as a plugin's args.
func rawArgs(t *testing.T, args any) runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: raw}
}

// argsAsJSON compares plugin arguments as JSON values, not as bytes, so
// that a difference is shown field by field.
var argsAsJSON = cmp.Transformer("args", func(r runtime.RawExtension) any {
	var v any
	if err := json.Unmarshal(r.Raw, &v); err != nil {
		return string(r.Raw)
	}
	return v
})

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// errorStrings renders errors as the scheduler prints them at start-up.
func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateSchedulerConfiguration(t *testing.T) {
	cases := map[string]struct {
		mutate   func(*SchedulerConfiguration)
		registry Registry
		want     []string
	}{
		"defaults are valid": {},
		"sharding modes": {
			mutate: func(c *SchedulerConfiguration) {
				c.Sharding = ShardingConfiguration{Mode: ShardingHard, ShardName: "batch"}
			},
		},
		"unknown sharding mode and a bad shard name": {
			mutate: func(c *SchedulerConfiguration) {
				c.Sharding = ShardingConfiguration{Mode: "strict", ShardName: "Batch"}
			},
			want: []string{
				`sharding.mode: Unsupported value: "strict": supported values: "none", "soft", "hard"`,
				`sharding.shardName: Invalid value: "Batch": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			},
		},
		"a fast lane": {
			mutate: func(c *SchedulerConfiguration) {
				c.FastLane = FastLaneConfiguration{SchedulerNames: []string{"caldera-fast"}, Queues: []string{"agents"}, Workers: new(int32(4))}
			},
		},
		"a fast lane name the cycle serves, a repeated queue, no workers": {
			mutate: func(c *SchedulerConfiguration) {
				c.FastLane = FastLaneConfiguration{SchedulerNames: []string{"volcano"}, Queues: []string{"agents", "agents"}, Workers: new(int32(0))}
			},
			want: []string{
				`fastLane.schedulerNames[0]: Invalid value: "volcano": already in the top-level schedulerNames: a name is either the scheduling cycle's or the fast lane's`,
				`fastLane.queues[1]: Duplicate value: "agents"`,
				`fastLane.workers: Invalid value: 0: must be between 1 and 64`,
			},
		},
		"every known action once": {
			mutate: func(c *SchedulerConfiguration) { c.Actions = KnownActions() },
		},
		"unknown action with a suggestion": {
			mutate: func(c *SchedulerConfiguration) { c.Actions = []string{"enqueue", "allocte"} },
			want:   []string{`actions[1]: Invalid value: "allocte": unknown action; did you mean "allocate"? (known actions: "allocate", "backfill", "enqueue", "preempt", "reclaim", "shuffle")`},
		},
		"unknown action without a suggestion": {
			mutate: func(c *SchedulerConfiguration) { c.Actions = []string{"elect"} },
			want:   []string{`actions[0]: Invalid value: "elect": unknown action (known actions: "allocate", "backfill", "enqueue", "preempt", "reclaim", "shuffle")`},
		},
		"duplicate action": {
			mutate: func(c *SchedulerConfiguration) { c.Actions = []string{"enqueue", "allocate", "enqueue"} },
			want:   []string{`actions[2]: Duplicate value: "enqueue"`},
		},
		"action not implemented": {
			mutate:   func(c *SchedulerConfiguration) { c.Actions = []string{"allocate", "shuffle"} },
			registry: NameRegistry{Plugins: testRegistry.Plugins, Actions: []string{"allocate"}},
			want:     []string{`actions[1]: Invalid value: "shuffle": action is not available in this version of Caldera`},
		},
		"misspelled plugin": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers[0].Plugins[0].Name = "priorty" },
			want:   []string{`tiers[0].plugins[0].name: Invalid value: "priorty": unknown plugin; did you mean "priority"? (known plugins: ` + knownPluginsList + `)`},
		},
		"unknown plugin without a suggestion": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers[1].Plugins[2].Name = "kube-batch" },
			want:   []string{`tiers[1].plugins[2].name: Invalid value: "kube-batch": unknown plugin (known plugins: ` + knownPluginsList + `)`},
		},
		"known plugin not available in this version": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[0].Plugins = append(c.Tiers[0].Plugins, PluginConfig{Name: SLAPlugin, Args: runtime.RawExtension{Raw: []byte(`{"sla-waiting-time":"1h"}`)}})
			},
			want: []string{`tiers[0].plugins[3].name: Invalid value: "sla": plugin is not available in this version of Caldera (available plugins: ` + availablePluginsList + `)`},
		},
		"plugin without a name": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers[0].Plugins[0].Name = "" },
			want:   []string{`tiers[0].plugins[0].name: Required value`},
		},
		"plugin listed twice across tiers": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[1].Plugins = append(c.Tiers[1].Plugins, PluginConfig{Name: GangPlugin})
			},
			want: []string{`tiers[1].plugins[5].name: Duplicate value: "gang"`},
		},
		"empty tier": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers = append(c.Tiers, Tier{}) },
			want:   []string{`tiers[2].plugins: Required value: a tier needs at least one plugin`},
		},
		"proportion with capacity": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[1].Plugins = append(c.Tiers[1].Plugins, PluginConfig{Name: CapacityPlugin})
			},
			want: []string{`tiers[1].plugins[5].name: Invalid value: "capacity": proportion and capacity both divide the cluster among queues; enable only one of them`},
		},
		"proportion with hierarchical drf": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers[1].Plugins[1].EnableHierarchy = new(true) },
			want:   []string{`tiers[1].plugins[1].enableHierarchy: Invalid value: true: drf with hierarchy and proportion both divide the cluster among queues; disable one of them`},
		},
		"hierarchical capacity without proportion": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[1].Plugins[3] = PluginConfig{Name: CapacityPlugin, EnableHierarchy: new(true)}
			},
		},
		"hierarchy on a plugin without queues": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers[0].Plugins[1].EnableHierarchy = new(false) },
			want:   []string{`tiers[0].plugins[1].enableHierarchy: Invalid value: false: only drf, capacity and nodegroup have hierarchical queues`},
		},
		"arguments to a plugin without arguments": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[0].Plugins[1].Args = runtime.RawExtension{Raw: []byte(`{"minAvailable":1}`)}
			},
			want: []string{`tiers[0].plugins[1].args: Invalid value: "{\"minAvailable\":1}": plugin gang takes no arguments`},
		},
		"empty arguments to a plugin without arguments": {
			mutate: func(c *SchedulerConfiguration) { c.Tiers[0].Plugins[1].Args = runtime.RawExtension{Raw: []byte(`{}`)} },
		},
		"bad typed arguments": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[1].Plugins[0].Args = rawArgs(t, &OvercommitArgs{Factor: new(0.5)})
				c.Tiers[1].Plugins = append(c.Tiers[1].Plugins, PluginConfig{Name: BinpackPlugin, Args: rawArgs(t, &BinpackArgs{Weight: new(int32(-1))})})
			},
			want: []string{
				`tiers[1].plugins[0].args.factor: Invalid value: 0.5: must be at least 1`,
				`tiers[1].plugins[5].args.weight: Invalid value: -1: must be greater than or equal to 0`,
			},
		},
		"unknown argument field": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[1].Plugins[4].Args = runtime.RawExtension{Raw: []byte(`{"leastrequestedWeight":1}`)}
			},
			want: []string{`tiers[1].plugins[4].args.leastrequestedWeight: Forbidden: unknown field; did you mean "leastRequestedWeight"?`},
		},
		"argument of the wrong type": {
			mutate: func(c *SchedulerConfiguration) {
				c.Tiers[1].Plugins[4].Args = runtime.RawExtension{Raw: []byte(`{"leastRequestedWeight":"high"}`)}
			},
			want: []string{`tiers[1].plugins[4].args: Invalid value: cannot unmarshal string into Go struct field NodeOrderArgs.leastRequestedWeight of type int32`},
		},
		"negative coalescing window": {
			mutate: func(c *SchedulerConfiguration) { c.Cycle.CoalesceWindow = duration(-time.Millisecond) },
			want:   []string{`cycle.coalesceWindow: Invalid value: "-1ms": must not be negative`},
		},
		"zero heartbeat": {
			mutate: func(c *SchedulerConfiguration) { c.Cycle.Heartbeat = duration(0) },
			want:   []string{`cycle.heartbeat: Invalid value: "0s": must be positive`},
		},
		"heartbeat below the coalescing window": {
			mutate: func(c *SchedulerConfiguration) { c.Cycle.Heartbeat = duration(5 * time.Millisecond) },
			want:   []string{`cycle.heartbeat: Invalid value: "5ms": must not be below coalesceWindow`},
		},
		"negative cycle limit": {
			mutate: func(c *SchedulerConfiguration) { c.Cycle.MaxDuration = duration(-time.Second) },
			want:   []string{`cycle.maxDuration: Invalid value: "-1s": must not be negative`},
		},
		"binder concurrency below 1 and negative timeout": {
			mutate: func(c *SchedulerConfiguration) {
				c.Binder.Concurrency = new(int32(0))
				c.Binder.Timeout = duration(-time.Second)
			},
			want: []string{
				`binder.concurrency: Invalid value: 0: must be at least 1`,
				`binder.timeout: Invalid value: "-1s": must be positive`,
			},
		},
		"node sampling out of range": {
			mutate: func(c *SchedulerConfiguration) {
				c.NodeSampling.PercentageOfNodesToFind = new(int32(101))
				c.NodeSampling.MinNodesToFind = new(int32(0))
			},
			want: []string{
				`nodeSampling.percentageOfNodesToFind: Invalid value: 101: must be between 0 and 100`,
				`nodeSampling.minNodesToFind: Invalid value: 0: must be at least 1`,
			},
		},
		"preemption candidates": {
			mutate: func(c *SchedulerConfiguration) {
				c.Preemption.Workers = new(int32(0))
				c.Preemption.MinCandidateNodesPercentage = new(int32(-1))
				c.Preemption.MinCandidateNodesAbsolute = new(int32(10))
				c.Preemption.MaxCandidateNodesAbsolute = new(int32(5))
			},
			want: []string{
				`preemption.workers: Invalid value: 0: must be at least 1`,
				`preemption.minCandidateNodesPercentage: Invalid value: -1: must be between 0 and 100`,
				`preemption.maxCandidateNodesAbsolute: Invalid value: 5: must not be below minCandidateNodesAbsolute`,
			},
		},
		"scheduler names": {
			mutate: func(c *SchedulerConfiguration) { c.SchedulerNames = []string{"volcano", "Volcano", "volcano"} },
			want: []string{
				`schedulerNames[1]: Invalid value: "Volcano": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`schedulerNames[2]: Duplicate value: "volcano"`,
			},
		},
		"no scheduler names": {
			mutate: func(c *SchedulerConfiguration) { c.SchedulerNames = nil },
			want:   []string{`schedulerNames: Required value: name at least one scheduler`},
		},
		"leader election timing": {
			mutate: func(c *SchedulerConfiguration) {
				c.LeaderElection.RenewDeadline = duration(15 * time.Second)
				c.LeaderElection.RetryPeriod = duration(20 * time.Second)
			},
			want: []string{
				`leaderElection.renewDeadline: Invalid value: "15s": must be below leaseDuration`,
				`leaderElection.retryPeriod: Invalid value: "20s": must be below renewDeadline`,
			},
		},
		"leader election lock and negative lease": {
			mutate: func(c *SchedulerConfiguration) {
				c.LeaderElection.ResourceLock = "endpoints"
				c.LeaderElection.LeaseDuration = duration(-time.Second)
			},
			want: []string{
				`leaderElection.leaseDuration: Invalid value: "-1s": must be positive`,
				`leaderElection.resourceLock: Unsupported value: "endpoints": supported values: "leases"`,
			},
		},
		"leader election off skips its checks": {
			mutate: func(c *SchedulerConfiguration) {
				c.LeaderElection.LeaderElect = new(false)
				c.LeaderElection.ResourceLock = "endpoints"
			},
		},
		"negative client rates": {
			mutate: func(c *SchedulerConfiguration) {
				c.ClientConnection.QPS = new(float32(-1))
				c.ClientConnection.Burst = new(int32(-1))
			},
			want: []string{
				`clientConnection.qps: Invalid value: -1: must not be negative`,
				`clientConnection.burst: Invalid value: -1: must be at least 0`,
			},
		},
		"bind addresses": {
			mutate: func(c *SchedulerConfiguration) {
				c.HealthzBindAddress = "11251"
				c.MetricsBindAddress = "0"
			},
			want: []string{`healthzBindAddress: Invalid value: "11251": must be "host:port", ":port" or "0" to disable`},
		},
		"metrics source": {
			mutate: func(c *SchedulerConfiguration) {
				c.MetricsSource = &MetricsSourceConfiguration{Type: "influxdb", Interval: duration(0)}
			},
			want: []string{
				`metricsSource.type: Unsupported value: "influxdb": supported values: "prometheus", "prometheus_adaptor", "elasticsearch"`,
				`metricsSource.address: Required value`,
				`metricsSource.interval: Invalid value: "0s": must be positive`,
			},
		},
		"a metrics source of this version": {
			mutate: func(c *SchedulerConfiguration) {
				c.MetricsSource = &MetricsSourceConfiguration{Type: "elasticsearch", Address: "http://es:9200", Interval: duration(time.Minute)}
			},
			want: []string{
				`metricsSource.type: Invalid value: "elasticsearch": not available in this version of Caldera: use prometheus, or leave metricsSource out and the usage plugin reads the nodes' NodeUsage from caldera-agent`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := &SchedulerConfiguration{}
			SetDefaults_SchedulerConfiguration(cfg)
			if tc.mutate != nil {
				tc.mutate(cfg)
			}
			reg := tc.registry
			if reg == nil {
				reg = testRegistry
			}
			got := errorStrings(ValidateSchedulerConfiguration(cfg, reg))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateSchedulerConfiguration (-want,+got):\n%s", diff)
			}
		})
	}
}
