package v1alpha1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultConfig is the configuration an empty file defaults to, written out.
func defaultConfig(t *testing.T) *SchedulerConfiguration {
	return &SchedulerConfiguration{
		TypeMeta:       metav1.TypeMeta{APIVersion: "scheduler.config.caldera.sh/v1alpha1", Kind: "SchedulerConfiguration"},
		SchedulerNames: []string{"volcano"},
		Actions:        []string{"enqueue", "allocate", "backfill"},
		Tiers: []Tier{
			{Plugins: []PluginConfig{{Name: "priority"}, {Name: "gang"}, {Name: "conformance"}}},
			{Plugins: []PluginConfig{
				{Name: "overcommit", Args: rawArgs(t, &OvercommitArgs{Factor: new(1.2)})},
				{Name: "drf"},
				{Name: "predicates", Args: rawArgs(t, defaultPredicatesArgs())},
				{Name: "proportion"},
				{Name: "nodeorder", Args: rawArgs(t, defaultNodeOrderArgs())},
			}},
		},
		Preemption: PreemptionConfiguration{
			TopologyAware:               new(false),
			Workers:                     new(int32(16)),
			MinCandidateNodesPercentage: new(int32(10)),
			MinCandidateNodesAbsolute:   new(int32(100)),
			MaxCandidateNodesAbsolute:   new(int32(100)),
		},
		Cycle:  CycleConfiguration{CoalesceWindow: duration(10 * time.Millisecond), Heartbeat: duration(time.Second), MaxDuration: duration(time.Second)},
		Binder: BinderConfiguration{Concurrency: new(int32(64)), Timeout: duration(30 * time.Second)},
		NodeSampling: NodeSamplingConfiguration{
			PercentageOfNodesToFind: new(int32(0)),
			MinNodesToFind:          new(int32(100)),
		},
		Sharding:         ShardingConfiguration{Mode: ShardingNone},
		FastLane:         FastLaneConfiguration{Workers: new(int32(2))},
		ClientConnection: ClientConnectionConfiguration{ContentType: "application/vnd.kubernetes.protobuf", QPS: new(float32(200)), Burst: new(int32(400))},
		LeaderElection: LeaderElectionConfiguration{
			LeaderElect:       new(true),
			LeaseDuration:     duration(15 * time.Second),
			RenewDeadline:     duration(10 * time.Second),
			RetryPeriod:       duration(2 * time.Second),
			ResourceLock:      "leases",
			ResourceName:      "caldera-scheduler",
			ResourceNamespace: "kube-system",
		},
		HealthzBindAddress: ":11251",
		MetricsBindAddress: ":8080",
		EnableProfiling:    new(false),
	}
}

func defaultPredicatesArgs() *PredicatesArgs {
	return &PredicatesArgs{
		NodeAffinity: new(true), NodePorts: new(true), TaintToleration: new(true), PodAffinity: new(true),
		NodeVolumeLimits: new(true), VolumeZone: new(true), PodTopologySpread: new(true), VolumeBinding: new(true),
		VolumeBindingTimeout: duration(30 * time.Second), VolumeBindingWeight: new(int32(1)),
		DynamicResourceAllocation: new(false), DRAFilterTimeout: duration(10 * time.Second), Cache: new(false),
	}
}

func defaultNodeOrderArgs() *NodeOrderArgs {
	return &NodeOrderArgs{
		LeastRequestedWeight: new(int32(1)), MostRequestedWeight: new(int32(0)), NodeAffinityWeight: new(int32(2)),
		PodAffinityWeight: new(int32(2)), BalancedResourceWeight: new(int32(1)), TaintTolerationWeight: new(int32(3)),
		ImageLocalityWeight: new(int32(1)), PodTopologySpreadWeight: new(int32(2)),
	}
}

func TestSetDefaults(t *testing.T) {
	cases := map[string]struct {
		in   *SchedulerConfiguration
		want func() *SchedulerConfiguration
	}{
		"empty configuration": {
			in:   &SchedulerConfiguration{},
			want: func() *SchedulerConfiguration { return defaultConfig(t) },
		},
		"given values are kept, zero weights included": {
			in: &SchedulerConfiguration{
				SchedulerNames: []string{"caldera"},
				Actions:        []string{"allocate"},
				Tiers: []Tier{{Plugins: []PluginConfig{
					{Name: "binpack", Args: rawArgs(t, &BinpackArgs{Weight: new(int32(0))})},
					{Name: "nodeorder", EnableNodeOrder: new(false), Args: rawArgs(t, &NodeOrderArgs{LeastRequestedWeight: new(int32(0))})},
				}}},
				Cycle:          CycleConfiguration{Heartbeat: duration(5 * time.Second)},
				LeaderElection: LeaderElectionConfiguration{LeaderElect: new(false), ResourceName: "sched"},
			},
			want: func() *SchedulerConfiguration {
				c := defaultConfig(t)
				c.SchedulerNames = []string{"caldera"}
				c.Actions = []string{"allocate"}
				nodeOrder := defaultNodeOrderArgs()
				nodeOrder.LeastRequestedWeight = new(int32(0))
				c.Tiers = []Tier{{Plugins: []PluginConfig{
					{Name: "binpack", Args: rawArgs(t, &BinpackArgs{Weight: new(int32(0)), CPU: new(int32(1)), Memory: new(int32(1))})},
					{Name: "nodeorder", EnableNodeOrder: new(false), Args: rawArgs(t, nodeOrder)},
				}}}
				c.Cycle.Heartbeat = duration(5 * time.Second)
				c.LeaderElection.LeaderElect = new(false)
				c.LeaderElection.ResourceName = "sched"
				return c
			},
		},
		"arguments that do not decode are left for validation": {
			in: &SchedulerConfiguration{Tiers: []Tier{{Plugins: []PluginConfig{
				{Name: "binpack", Args: runtime.RawExtension{Raw: []byte(`{"wieght":2}`)}},
				{Name: "sla", Args: runtime.RawExtension{Raw: []byte(`{"sla-waiting-time":"1h"}`)}},
			}}}},
			want: func() *SchedulerConfiguration {
				c := defaultConfig(t)
				c.Tiers = []Tier{{Plugins: []PluginConfig{
					{Name: "binpack", Args: runtime.RawExtension{Raw: []byte(`{"wieght":2}`)}},
					{Name: "sla", Args: runtime.RawExtension{Raw: []byte(`{"sla-waiting-time":"1h"}`)}},
				}}}
				return c
			},
		},
		"metrics source": {
			in: &SchedulerConfiguration{MetricsSource: &MetricsSourceConfiguration{Address: "http://prometheus:9090"}},
			want: func() *SchedulerConfiguration {
				c := defaultConfig(t)
				c.MetricsSource = &MetricsSourceConfiguration{Type: "prometheus", Address: "http://prometheus:9090", Interval: duration(30 * time.Second)}
				return c
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			SetDefaults_SchedulerConfiguration(got)
			if diff := cmp.Diff(tc.want(), got, argsAsJSON); diff != "" {
				t.Errorf("SetDefaults_SchedulerConfiguration (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			SetDefaults_SchedulerConfiguration(again)
			if diff := cmp.Diff(got, again, argsAsJSON); diff != "" {
				t.Errorf("defaulting twice differs from once (-once,+twice):\n%s", diff)
			}
		})
	}
}
