package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// coreRegistry holds the plugins Caldera implements first, and every known
// action.
var coreRegistry = v1alpha1.NameRegistry{
	Plugins: []string{"gang", "priority", "drf", "proportion", "capacity", "predicates", "nodeorder", "binpack", "conformance", "overcommit", "cdp"},
	Actions: v1alpha1.KnownActions(),
}

// withTopology adds network-topology-aware to coreRegistry.
var withTopology = v1alpha1.NameRegistry{
	Plugins: append([]string{"network-topology-aware"}, coreRegistry.Plugins...),
	Actions: coreRegistry.Actions,
}

var argsAsJSON = cmp.Transformer("args", func(r runtime.RawExtension) any {
	var v any
	if err := json.Unmarshal(r.Raw, &v); err != nil {
		return string(r.Raw)
	}
	return v
})

func rawArgs(t *testing.T, args any) runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: raw}
}

// defaulted returns cfg after defaulting, as Load returns it.
func defaulted(cfg *v1alpha1.SchedulerConfiguration) *v1alpha1.SchedulerConfiguration {
	v1alpha1.SetDefaults_SchedulerConfiguration(cfg)
	return cfg
}

func plugins(ps ...v1alpha1.PluginConfig) v1alpha1.Tier { return v1alpha1.Tier{Plugins: ps} }

func TestLoadVolcano(t *testing.T) {
	cases := map[string]struct {
		conf     string
		registry v1alpha1.Registry
		want     *v1alpha1.SchedulerConfiguration
	}{
		// The volcano-scheduler.conf of Volcano's Helm chart.
		"Volcano's default": {
			conf: `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
  - name: nodeorder
  - name: binpack
`,
			want: defaulted(&v1alpha1.SchedulerConfiguration{
				Actions: []string{"enqueue", "allocate", "backfill"},
				Tiers: []v1alpha1.Tier{
					plugins(v1alpha1.PluginConfig{Name: "priority"}, v1alpha1.PluginConfig{Name: "gang", EnablePreemptable: new(false)}, v1alpha1.PluginConfig{Name: "conformance"}),
					plugins(v1alpha1.PluginConfig{Name: "overcommit"}, v1alpha1.PluginConfig{Name: "drf", EnablePreemptable: new(false)},
						v1alpha1.PluginConfig{Name: "predicates"}, v1alpha1.PluginConfig{Name: "capacity"},
						v1alpha1.PluginConfig{Name: "nodeorder"}, v1alpha1.PluginConfig{Name: "binpack"}),
				},
			}),
		},
		"hierarchical queues with capacity": {
			conf: `
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
    enableHierarchy: true
  - name: nodeorder
`,
			want: defaulted(&v1alpha1.SchedulerConfiguration{
				Actions: []string{"enqueue", "allocate", "backfill", "reclaim"},
				Tiers: []v1alpha1.Tier{
					plugins(v1alpha1.PluginConfig{Name: "priority"}, v1alpha1.PluginConfig{Name: "gang", EnablePreemptable: new(false)}, v1alpha1.PluginConfig{Name: "conformance"}),
					plugins(v1alpha1.PluginConfig{Name: "drf", EnablePreemptable: new(false)}, v1alpha1.PluginConfig{Name: "predicates"},
						v1alpha1.PluginConfig{Name: "capacity", EnableHierarchy: new(true)}, v1alpha1.PluginConfig{Name: "nodeorder"}),
				},
			}),
		},
		"binpack for GPUs": {
			conf: `
actions: "enqueue, reclaim, allocate, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
    arguments:
      predicate.ProportionalEnable: true
      predicate.resources: nvidia.com/gpu
      predicate.resources.nvidia.com/gpu.cpu: 4
      predicate.resources.nvidia.com/gpu.memory: 8
  - name: proportion
  - name: nodeorder
    arguments:
      leastrequested.weight: 0
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 5
      binpack.memory: 1
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
      binpack.resources.example.com/foo: 3
`,
			want: defaulted(&v1alpha1.SchedulerConfiguration{
				Actions: []string{"enqueue", "reclaim", "allocate", "backfill", "preempt"},
				Tiers: []v1alpha1.Tier{
					plugins(v1alpha1.PluginConfig{Name: "priority"}, v1alpha1.PluginConfig{Name: "gang"}, v1alpha1.PluginConfig{Name: "conformance"}),
					plugins(
						v1alpha1.PluginConfig{Name: "drf"},
						v1alpha1.PluginConfig{Name: "predicates", Args: rawArgs(t, &v1alpha1.PredicatesArgs{
							Proportional: &v1alpha1.ProportionalPredicate{Resources: map[corev1.ResourceName]v1alpha1.ResourceReservation{
								"nvidia.com/gpu": {CPU: new(resource.MustParse("4")), Memory: new(resource.MustParse("8G"))},
							}},
						})},
						v1alpha1.PluginConfig{Name: "proportion"},
						v1alpha1.PluginConfig{Name: "nodeorder", Args: rawArgs(t, &v1alpha1.NodeOrderArgs{LeastRequestedWeight: new(int32(0))})},
						v1alpha1.PluginConfig{Name: "binpack", Args: rawArgs(t, &v1alpha1.BinpackArgs{
							Weight: new(int32(10)), CPU: new(int32(5)), Memory: new(int32(1)),
							Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 2, "example.com/foo": 3},
						})},
					),
				},
			}),
		},
		"network topology aware": {
			conf: `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
    arguments:
      weight: 10
`,
			registry: withTopology,
			want: defaulted(&v1alpha1.SchedulerConfiguration{
				Actions: []string{"enqueue", "allocate", "backfill"},
				Tiers: []v1alpha1.Tier{
					plugins(v1alpha1.PluginConfig{Name: "priority"}, v1alpha1.PluginConfig{Name: "gang", EnablePreemptable: new(false)}, v1alpha1.PluginConfig{Name: "conformance"}),
					plugins(v1alpha1.PluginConfig{Name: "drf", EnablePreemptable: new(false)}, v1alpha1.PluginConfig{Name: "predicates"},
						v1alpha1.PluginConfig{Name: "proportion"}, v1alpha1.PluginConfig{Name: "nodeorder"}, v1alpha1.PluginConfig{Name: "binpack"},
						v1alpha1.PluginConfig{Name: "network-topology-aware", Args: rawArgs(t, &v1alpha1.NetworkTopologyAwareArgs{Weight: new(int32(10))})}),
				},
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := tc.registry
			if reg == nil {
				reg = coreRegistry
			}
			got, err := Load([]byte(tc.conf), reg)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, argsAsJSON); diff != "" {
				t.Errorf("Load (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	cases := map[string]struct {
		conf       string
		wantFormat Format
		want       []string
	}{
		"misspelled plugin in a Volcano file": {
			conf: `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priorty
  - name: gang
`,
			wantFormat: VolcanoFormat,
			want:       []string{`tiers[0].plugins[0].name: Invalid value: "priorty": unknown plugin; did you mean "priority"? (known plugins: "binpack", "capacity", "capacity-card", "cdp", "conformance", "deviceshare", "drf", "extender", "gang", "network-topology-aware", "nodegroup", "nodeorder", "numa-aware", "overcommit", "pdb", "predicates", "priority", "proportion", "rescheduling", "resource-strategy-fit", "resourcequota", "sla", "task-topology", "tdm", "usage")`},
		},
		"unknown argument key in a Volcano file": {
			conf: `
actions: "allocate"
tiers:
- plugins:
  - name: nodeorder
    arguments:
      nodeafinity.weight: 2
`,
			wantFormat: VolcanoFormat,
			want:       []string{`tiers[0].plugins[0].arguments[nodeafinity.weight]: Forbidden: unknown argument of plugin nodeorder; did you mean "nodeaffinity.weight"?`},
		},
		"a plugin not available in this version": {
			conf: `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
  - name: network-topology-aware
    arguments:
      weight: 10
`,
			wantFormat: VolcanoFormat,
			want:       []string{`tiers[0].plugins[1].name: Invalid value: "network-topology-aware": plugin is not available in this version of Caldera (available plugins: "binpack", "capacity", "cdp", "conformance", "drf", "gang", "nodeorder", "overcommit", "predicates", "priority", "proportion")`},
		},
		"translation and validation errors together, at Volcano's paths": {
			conf: `
actions: "enqueue, allocate, enqueue"
tiers:
- plugins:
  - name: binpack
    enabledJobOrder: false
    arguments:
      binpack.weight: -1
  - name: proportion
  - name: capacity
configurations:
- name: preempt
  arguments:
    topologyAwarePreemptWorkerNum: 0
`,
			wantFormat: VolcanoFormat,
			want: []string{
				`tiers[0].plugins[0].enabledJobOrder: Forbidden: unknown field; did you mean "enableJobOrder"?`,
				`actions: Duplicate value: "enqueue"`,
				`tiers[0].plugins[0].arguments[binpack.weight]: Invalid value: -1: must be greater than or equal to 0`,
				`tiers[0].plugins[2].name: Invalid value: "capacity": proportion and capacity both divide the cluster among queues; enable only one of them`,
				`configurations[0].arguments[topologyAwarePreemptWorkerNum]: Invalid value: 0: must be at least 1`,
			},
		},
		"unknown field in a Caldera file": {
			conf: `
apiVersion: scheduler.config.caldera.sh/v1alpha1
kind: SchedulerConfiguration
cycle:
  heartBeat: 2s
`,
			wantFormat: CalderaFormat,
			want:       []string{`cycle.heartBeat: Forbidden: unknown field; did you mean "heartbeat"?`},
		},
		"Volcano spelling inside a Caldera file": {
			conf: `
apiVersion: scheduler.config.caldera.sh/v1alpha1
kind: SchedulerConfiguration
actions: "enqueue, allocate"
`,
			wantFormat: CalderaFormat,
			want:       []string{`<nil>: Invalid value: cannot unmarshal string into Go struct field SchedulerConfiguration.actions of type []string`},
		},
		"Caldera file without kind": {
			conf: `
apiVersion: scheduler.config.caldera.sh/v1alpha1
binder:
  concurrency: 0
`,
			wantFormat: CalderaFormat,
			want: []string{
				`kind: Unsupported value: "": supported values: "SchedulerConfiguration"`,
				`binder.concurrency: Invalid value: 0: must be at least 1`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load([]byte(tc.conf), coreRegistry)
			var invalid *InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("Load error = %v, want an *InvalidError", err)
			}
			if invalid.Format != tc.wantFormat {
				t.Errorf("format = %s, want %s", invalid.Format, tc.wantFormat)
			}
			var got []string
			for _, e := range invalid.Errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
			if !strings.HasPrefix(err.Error(), "invalid "+string(tc.wantFormat)+" scheduler configuration:\n  "+tc.want[0]) {
				t.Errorf("message does not start with the first error:\n%s", err)
			}
		})
	}
}

func TestLoadMalformed(t *testing.T) {
	cases := map[string]struct {
		conf string
		want string
	}{
		"empty":          {conf: "", want: "scheduler configuration must be a YAML or JSON mapping"},
		"a list":         {conf: "- actions", want: "scheduler configuration must be a YAML or JSON mapping"},
		"not YAML":       {conf: "actions: [", want: "scheduler configuration is not valid YAML or JSON: "},
		"duplicate keys": {conf: "actions: allocate\nactions: backfill\n", want: "scheduler configuration is not valid YAML or JSON: "},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load([]byte(tc.conf), coreRegistry)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Load error = %v, want one starting %q", err, tc.want)
			}
		})
	}
}

// TestLoadJSON checks that JSON is read as well as YAML.
func TestLoadJSON(t *testing.T) {
	cases := map[string]struct {
		conf string
	}{
		"Volcano": {conf: `{"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}`},
		"Caldera": {conf: `{"apiVersion": "scheduler.config.caldera.sh/v1alpha1", "kind": "SchedulerConfiguration",
			"actions": ["allocate"], "tiers": [{"plugins": [{"name": "gang"}]}]}`},
	}
	want := defaulted(&v1alpha1.SchedulerConfiguration{
		Actions: []string{"allocate"},
		Tiers:   []v1alpha1.Tier{plugins(v1alpha1.PluginConfig{Name: "gang"})},
	})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Load([]byte(tc.conf), coreRegistry)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(want, got, argsAsJSON); diff != "" {
				t.Errorf("Load (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestRoundTrip writes a configuration with every field set in Caldera's
// format and loads it back.
func TestRoundTrip(t *testing.T) {
	cfg := defaulted(&v1alpha1.SchedulerConfiguration{
		SchedulerNames: []string{"volcano", "caldera"},
		Actions:        []string{"enqueue", "allocate", "preempt", "reclaim", "backfill", "shuffle"},
		Tiers: []v1alpha1.Tier{
			plugins(v1alpha1.PluginConfig{Name: "gang", EnablePreemptable: new(false), EnableJobStarving: new(true)}),
			plugins(
				v1alpha1.PluginConfig{Name: "capacity", EnableHierarchy: new(true)},
				v1alpha1.PluginConfig{Name: "overcommit", Args: rawArgs(t, &v1alpha1.OvercommitArgs{ResourceFactors: map[corev1.ResourceName]float64{"cpu": 2}})},
				v1alpha1.PluginConfig{Name: "binpack", EnableNodeOrder: new(true), Args: rawArgs(t, &v1alpha1.BinpackArgs{Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 4}})},
			),
		},
		MetricsSource:  &v1alpha1.MetricsSourceConfiguration{Address: "http://prometheus:9090"},
		LeaderElection: v1alpha1.LeaderElectionConfiguration{LeaderElect: new(false)},
	})
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(out, coreRegistry)
	if err != nil {
		t.Fatalf("Load: %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg, got, argsAsJSON); diff != "" {
		t.Errorf("round trip (-written,+loaded):\n%s", diff)
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "absent.conf"), coreRegistry)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile error = %v, want one wrapping os.ErrNotExist", err)
	}
}
