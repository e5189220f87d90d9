package volcano

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// argsAsJSON compares plugin arguments as JSON values rather than bytes.
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

// config returns a translated configuration with the given tiers.
func config(tiers ...v1alpha1.Tier) *v1alpha1.SchedulerConfiguration {
	c := &v1alpha1.SchedulerConfiguration{Tiers: tiers}
	c.APIVersion, c.Kind = "scheduler.config.caldera.sh/v1alpha1", "SchedulerConfiguration"
	return c
}

func tier(plugins ...v1alpha1.PluginConfig) v1alpha1.Tier { return v1alpha1.Tier{Plugins: plugins} }

func translateYAML(t *testing.T, in string) (*v1alpha1.SchedulerConfiguration, Origins, field.ErrorList) {
	t.Helper()
	doc, err := yaml.YAMLToJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	return Translate(doc)
}

func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestTranslate(t *testing.T) {
	cases := map[string]struct {
		in   string
		want *v1alpha1.SchedulerConfiguration
	}{
		"actions string": {
			in: `actions: " enqueue,allocate , backfill,"`,
			want: func() *v1alpha1.SchedulerConfiguration {
				c := config()
				c.Actions = []string{"enqueue", "allocate", "backfill"}
				return c
			}(),
		},
		"plugin switches, booleans or strings": {
			in: `
tiers:
- plugins:
  - name: gang
    enablePreemptable: false
    enableJobStarving: "false"
  - name: network-topology-aware
    enabledHyperNodeOrder: true
    enabledHyperNodeGradient: false
  - name: drf
    enableHierarchy: true
    enableNamespaceOrder: false
`,
			want: config(tier(
				v1alpha1.PluginConfig{Name: "gang", EnablePreemptable: new(false), EnableJobStarving: new(false)},
				v1alpha1.PluginConfig{Name: "network-topology-aware", EnableHyperNodeOrder: new(true), EnableHyperNodeGradient: new(false)},
				v1alpha1.PluginConfig{Name: "drf", EnableHierarchy: new(true), EnableNamespaceOrder: new(false)},
			)),
		},
		"binpack with numbers written as numbers or strings": {
			in: `
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: "5"
      binpack.memory: 1.0
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "binpack", Args: rawArgs(t, &v1alpha1.BinpackArgs{
				Weight: new(int32(10)), CPU: new(int32(5)), Memory: new(int32(1)),
				Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 2, "example.com/foo": 1},
			})})),
		},
		"usage with Volcano's keys and enablePredicate": {
			in: `
tiers:
- plugins:
  - name: usage
    enablePredicate: false
    arguments:
      usage.weight: 5
      cpu.weight: 1
      memory.weight: "2"
      thresholds:
        cpu: 70
        mem: 85.5
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "usage", EnablePredicate: new(false), Args: rawArgs(t, &v1alpha1.UsageArgs{
				Weight: new(int32(5)), CPUWeight: new(int32(1)), MemoryWeight: new(int32(2)),
				Thresholds: v1alpha1.UsageThresholds{CPU: new(70.0), Memory: new(85.5)},
			})})),
		},
		"deviceshare with Volcano's keys": {
			in: `
tiers:
- plugins:
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
      deviceshare.NodeLockEnable: false
      deviceshare.SchedulePolicy: spread
      deviceshare.ScheduleWeight: 10
      deviceshare.VGPUEnable: false
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "deviceshare", Args: rawArgs(t, &v1alpha1.DeviceShareArgs{
				GPUSharing: new(true), GPUNumber: new(false), SchedulePolicy: new("spread"), Weight: new(int32(10)), VGPU: new(false),
			})})),
		},
		"deviceshare's vGPU kind": {
			in: `
tiers:
- plugins:
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "deviceshare", Args: rawArgs(t, &v1alpha1.DeviceShareArgs{
				VGPU: new(true), SchedulePolicy: new("binpack"),
			})})),
		},
		"deviceshare's device ConfigMap": {
			in: `
tiers:
- plugins:
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.KnownGeometriesCMName: gpu-config
      deviceshare.KnownGeometriesCMNamespace: gpu-operator
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "deviceshare", Args: rawArgs(t, &v1alpha1.DeviceShareArgs{
				VGPU: new(true), DeviceConfig: &v1alpha1.ConfigMapReference{Namespace: "gpu-operator", Name: "gpu-config"},
			})})),
		},
		"nodeorder weights": {
			in: `
tiers:
- plugins:
  - name: nodeorder
    arguments:
      leastrequested.weight: 0
      mostrequested.weight: 2
      nodeaffinity.weight: 3
      podaffinity.weight: 4
      balancedresource.weight: 5
      tainttoleration.weight: 6
      imagelocality.weight: 7
      podtopologyspread.weight: 8
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "nodeorder", Args: rawArgs(t, &v1alpha1.NodeOrderArgs{
				LeastRequestedWeight: new(int32(0)), MostRequestedWeight: new(int32(2)), NodeAffinityWeight: new(int32(3)),
				PodAffinityWeight: new(int32(4)), BalancedResourceWeight: new(int32(5)), TaintTolerationWeight: new(int32(6)),
				ImageLocalityWeight: new(int32(7)), PodTopologySpreadWeight: new(int32(8)),
			})})),
		},
		"overcommit factors, integer or not": {
			in: `
tiers:
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 2
      overcommit-factor.cpu: "1.5"
      overcommit-factor.nvidia.com/gpu: 1
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "overcommit", Args: rawArgs(t, &v1alpha1.OvercommitArgs{
				Factor:          new(2.0),
				ResourceFactors: map[corev1.ResourceName]float64{"cpu": 1.5, "nvidia.com/gpu": 1},
			})})),
		},
		"predicates": {
			in: `
tiers:
- plugins:
  - name: predicates
    arguments:
      predicate.NodeAffinityEnable: true
      predicate.NodePortsEnable: false
      predicate.TaintTolerationEnable: "true"
      predicate.PodAffinityEnable: false
      predicate.NodeVolumeLimitsEnable: false
      predicate.VolumeZoneEnable: false
      predicate.PodTopologySpreadEnable: false
      predicate.VolumeBindingEnable: true
      predicate.DynamicResourceAllocationEnable: true
      predicate.CacheEnable: true
      predicate.GPUSharingEnable: false
      predicate.ProportionalEnable: true
      predicate.resources: nvidia.com/gpu
      predicate.resources.nvidia.com/gpu.cpu: 4
      predicate.resources.nvidia.com/gpu.memory: 8.5
      volumebinding.bindTimeoutSeconds: 600
      volumebinding.weight: 2
      volumebinding.shape:
      - utilization: 0
        score: 10
      - utilization: 100
        score: 0
      dynamicresources.filterTimeoutSeconds: 15
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "predicates", Args: rawArgs(t, &v1alpha1.PredicatesArgs{
				NodeAffinity: new(true), NodePorts: new(false), TaintToleration: new(true), PodAffinity: new(false),
				NodeVolumeLimits: new(false), VolumeZone: new(false), PodTopologySpread: new(false), VolumeBinding: new(true),
				DynamicResourceAllocation: new(true), Cache: new(true),
				VolumeBindingTimeout: &metav1.Duration{Duration: 10 * time.Minute}, VolumeBindingWeight: new(int32(2)),
				VolumeBindingShape: []v1alpha1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}},
				DRAFilterTimeout:   &metav1.Duration{Duration: 15 * time.Second},
				Proportional: &v1alpha1.ProportionalPredicate{Resources: map[corev1.ResourceName]v1alpha1.ResourceReservation{
					"nvidia.com/gpu": {CPU: new(resource.MustParse("4")), Memory: new(resource.MustParse("8500M"))},
				}},
			})})),
		},
		"proportional reservations without the switch do nothing, as in Volcano": {
			in: `
tiers:
- plugins:
  - name: predicates
    arguments:
      predicate.resources: nvidia.com/gpu
      predicate.resources.nvidia.com/gpu.cpu: 4
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "predicates", Args: rawArgs(t, &v1alpha1.PredicatesArgs{})})),
		},
		"network-topology-aware": {
			in: `
tiers:
- plugins:
  - name: network-topology-aware
    arguments:
      weight: 10
      hypernode.binpack.cpu: 5
      hypernode.binpack.memory: 1
      hypernode.binpack.resources: nvidia.com/gpu, example.com/foo
      hypernode.binpack.resources.nvidia.com/gpu: 2
      hypernode.binpack.resources.example.com/foo: 3
      hypernode.binpack.normal-pod.enable: true
      hypernode.binpack.normal-pod.fading: 0.5
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "network-topology-aware", Args: rawArgs(t, &v1alpha1.NetworkTopologyAwareArgs{
				Weight: new(int32(10)), BinpackCPU: new(int32(5)), BinpackMemory: new(int32(1)),
				BinpackResources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 2, "example.com/foo": 3},
				NormalPodBinpack: new(true), NormalPodFading: new(0.5),
			})})),
		},
		"nodegroup": {
			in: `
tiers:
- plugins:
  - name: nodegroup
    enableHierarchy: true
    arguments:
      strict: false
      enablePreferredOrder: true
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "nodegroup", EnableHierarchy: new(true), Args: rawArgs(t, &v1alpha1.NodeGroupArgs{
				Strict: new(false), EnablePreferredOrder: new(true),
			})})),
		},
		"resource-strategy-fit with retention": {
			in: `
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu:
          type: MostAllocated
          weight: 2
        cpu:
          type: LeastAllocated
          weight: 1
        example.com/*:
          type: MostAllocated
      sra.policy: retention
      sra.resources: nvidia.com/t4, nvidia.com/a10
      sra.retention.weight: 2
      sra.retention.nvidia.com/a10: 3
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "resource-strategy-fit", Args: rawArgs(t, &v1alpha1.ResourceStrategyFitArgs{
				Weight: new(int32(10)),
				Resources: map[string]v1alpha1.ResourceStrategy{
					"nvidia.com/gpu": {Type: v1alpha1.MostAllocated, Weight: new(int32(2))},
					"cpu":            {Type: v1alpha1.LeastAllocated, Weight: new(int32(1))},
					"example.com/*":  {Type: v1alpha1.MostAllocated},
				},
				SRA: &v1alpha1.ScarceResourceAvoidance{
					Policy:          v1alpha1.SRARetention,
					Resources:       map[corev1.ResourceName]int32{"nvidia.com/t4": 1, "nvidia.com/a10": 3},
					RetentionWeight: new(int32(2)),
				},
			})})),
		},
		"resource-strategy-fit with proportional": {
			in: `
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      sra.policy: proportional
      sra.resources: nvidia.com/gpu
      sra.proportional.nvidia.com/gpu.cpu: 8
      sra.proportional.nvidia.com/gpu.memory: 16
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "resource-strategy-fit", Args: rawArgs(t, &v1alpha1.ResourceStrategyFitArgs{
				SRA: &v1alpha1.ScarceResourceAvoidance{
					Policy:    v1alpha1.SRAProportional,
					Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 1},
					Proportional: map[corev1.ResourceName]v1alpha1.ResourceReservation{
						"nvidia.com/gpu": {CPU: new(resource.MustParse("8")), Memory: new(resource.MustParse("16G"))},
					},
				},
			})})),
		},
		"task-topology": {
			in: `
tiers:
- plugins:
  - name: task-topology
    arguments:
      task-topology.weight: 10
`,
			want: config(tier(v1alpha1.PluginConfig{Name: "task-topology", Args: rawArgs(t, &v1alpha1.TaskTopologyArgs{Weight: new(int32(10))})})),
		},
		"plugins without a typed translation keep their arguments": {
			in: `
tiers:
- plugins:
  - name: sla
    arguments:
      sla-waiting-time: 1h
  - name: tdm
    arguments:
      tdm.revocable-zone.rz1: 10:00-21:00
      tdm.evict.period: 1m
`,
			want: config(tier(
				v1alpha1.PluginConfig{Name: "sla", Args: runtime.RawExtension{Raw: []byte(`{"sla-waiting-time":"1h"}`)}},
				v1alpha1.PluginConfig{Name: "tdm", Args: runtime.RawExtension{Raw: []byte(`{"tdm.evict.period":"1m","tdm.revocable-zone.rz1":"10:00-21:00"}`)}},
			)),
		},
		"action arguments": {
			in: `
configurations:
- name: allocate
  arguments:
    predicateErrorCacheEnable: false
- name: preempt
  arguments:
    predicateErrorCacheEnable: true
    enableTopologyAwarePreemption: true
    topologyAwarePreemptWorkerNum: 8
    minCandidateNodesPercentage: 20
    minCandidateNodesAbsolute: "5"
    maxCandidateNodesAbsolute: 50
`,
			want: func() *v1alpha1.SchedulerConfiguration {
				c := config()
				c.Preemption = v1alpha1.PreemptionConfiguration{
					TopologyAware: new(true), Workers: new(int32(8)), MinCandidateNodesPercentage: new(int32(20)),
					MinCandidateNodesAbsolute: new(int32(5)), MaxCandidateNodesAbsolute: new(int32(50)),
				}
				return c
			}(),
		},
		"metrics": {
			in: `
metrics:
  type: prometheus
  address: http://prometheus.monitoring:9090
  interval: 1m
`,
			want: func() *v1alpha1.SchedulerConfiguration {
				c := config()
				c.MetricsSource = &v1alpha1.MetricsSourceConfiguration{
					Type: "prometheus", Address: "http://prometheus.monitoring:9090", Interval: &metav1.Duration{Duration: time.Minute},
				}
				return c
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, errs := translateYAML(t, tc.in)
			if len(errs) > 0 {
				t.Fatalf("Translate: %v", errs.ToAggregate())
			}
			if diff := cmp.Diff(tc.want, got, argsAsJSON); diff != "" {
				t.Errorf("Translate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestTranslateErrors(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []string
	}{
		"unknown top-level key": {
			in:   `action: "allocate"`,
			want: []string{`action: Forbidden: unknown field; did you mean "actions"?`},
		},
		"a Caldera file without apiVersion and kind": {
			in:   "schedulerNames: [volcano]\nactions: [allocate]",
			want: []string{`schedulerNames: Forbidden: not a Volcano key; a Caldera configuration must start with apiVersion: scheduler.config.caldera.sh/v1alpha1 and kind: SchedulerConfiguration`},
		},
		"actions of the wrong type": {
			in:   `actions: 3`,
			want: []string{`actions: Invalid value: "3": must be a comma-separated list of actions, such as "enqueue, allocate, backfill"`},
		},
		"switch named after Volcano's Go field": {
			in: `
tiers:
- plugins:
  - name: gang
    enabledJobOrder: false
    enablePreemptable: no-way
`,
			want: []string{
				`tiers[0].plugins[0].enablePreemptable: Invalid value: "no-way": must be true or false`,
				`tiers[0].plugins[0].enabledJobOrder: Forbidden: unknown field; did you mean "enableJobOrder"?`,
			},
		},
		"usage's thresholds": {
			in: `
tiers:
- plugins:
  - name: usage
    arguments:
      thresholds:
        cpu: high
        memory: 80
`,
			want: []string{
				`tiers[0].plugins[0].arguments[thresholds][cpu]: Invalid value: "high": must be a number`,
				`tiers[0].plugins[0].arguments[thresholds][memory]: Forbidden: unknown threshold (known: "cpu", "mem")`,
			},
		},
		"unknown argument key": {
			in: `
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.wieght: 10
  - name: nodeorder
    arguments:
      selectorspread.weight: 1
  - name: nodegroup
    arguments:
      strct: true
  - name: resource-strategy-fit
    arguments:
      sra.retention.nvidia.com/gpu: 2
      resources:
        cpu:
          kind: MostAllocated
`,
			want: []string{
				`tiers[0].plugins[0].arguments[binpack.wieght]: Forbidden: unknown argument of plugin binpack; did you mean "binpack.weight"?`,
				`tiers[0].plugins[1].arguments[selectorspread.weight]: Forbidden: unknown argument of plugin nodeorder (known: "balancedresource.weight", "imagelocality.weight", "leastrequested.weight", "mostrequested.weight", "nodeaffinity.weight", "podaffinity.weight", "podtopologyspread.weight", "tainttoleration.weight")`,
				`tiers[0].plugins[2].arguments[strct]: Forbidden: unknown argument of plugin nodegroup; did you mean "strict"?`,
				`tiers[0].plugins[3].arguments[resources][cpu].kind: Forbidden: unknown field (known: "type", "weight")`,
				`tiers[0].plugins[3].arguments[sra.retention.nvidia.com/gpu]: Invalid value: "2": nvidia.com/gpu is not listed in sra.resources, so this weight has no effect (Volcano ignores it); add it to sra.resources`,
			},
		},
		"arguments to a plugin without arguments": {
			in: `
tiers:
- plugins:
  - name: gang
    arguments:
      gang.minAvailable: 2
`,
			want: []string{`tiers[0].plugins[0].arguments[gang.minAvailable]: Forbidden: plugin gang takes no arguments`},
		},
		"values that do not parse": {
			in: `
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.weight: ten
      binpack.cpu: 1.5
  - name: overcommit
    arguments:
      overcommit-factor: [1]
`,
			want: []string{
				`tiers[0].plugins[0].arguments[binpack.cpu]: Invalid value: "1.5": must be an integer`,
				`tiers[0].plugins[0].arguments[binpack.weight]: Invalid value: "ten": must be an integer`,
				`tiers[0].plugins[1].arguments[overcommit-factor]: Invalid value: "[1]": must be a number`,
			},
		},
		"weight of a resource that is not listed": {
			in: `
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.resources: nvidia.com/gpu
      binpack.resources.example.com/foo: 3
`,
			want: []string{`tiers[0].plugins[0].arguments[binpack.resources.example.com/foo]: Invalid value: "3": example.com/foo is not listed in binpack.resources, so this weight has no effect (Volcano ignores it); add it to binpack.resources`},
		},
		"deviceshare kinds that are not available": {
			in: `
tiers:
- plugins:
  - name: deviceshare
    arguments:
      deviceshare.AscendHAMiVNPUEnable: true
      deviceshare.GPUSharingEnabled: true
`,
			want: []string{
				`tiers[0].plugins[0].arguments[deviceshare.AscendHAMiVNPUEnable]: Invalid value: true: AscendHAMiVNPUEnable is not available in this version of Caldera, which shares NVIDIA GPUs by memory (deviceshare.GPUSharingEnable), by whole cards (deviceshare.GPUNumberEnable) and as virtual GPUs (deviceshare.VGPUEnable)`,
				`tiers[0].plugins[0].arguments[deviceshare.GPUSharingEnabled]: Forbidden: unknown argument of plugin deviceshare; did you mean "deviceshare.GPUSharingEnable"?`,
			},
		},
		"GPU sharing in predicates": {
			in: `
tiers:
- plugins:
  - name: predicates
    arguments:
      predicate.GPUSharingEnable: true
`,
			want: []string{`tiers[0].plugins[0].arguments[predicate.GPUSharingEnable]: Invalid value: true: GPU sharing is the deviceshare plugin's job in current Volcano releases: list deviceshare with deviceshare.GPUSharingEnable or deviceshare.GPUNumberEnable instead`},
		},
		"action arguments": {
			in: `
configurations:
- name: enqueue
  arguments:
    overcommit-factor: 1.2
- name: allocate
  arguments:
    predicateErrorCacheEnabled: true
- name: elect
- name: allocate
- arguments: {}
`,
			want: []string{
				`configurations[0].arguments[overcommit-factor]: Forbidden: old Volcano releases read overcommit-factor here; set it in the arguments of the overcommit plugin`,
				`configurations[1].arguments[predicateErrorCacheEnabled]: Forbidden: unknown argument of action allocate; did you mean "predicateErrorCacheEnable"?`,
				`configurations[2].name: Forbidden: unknown action (known: "enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle")`,
				`configurations[3].name: Duplicate value: "allocate"`,
				`configurations[4].name: Required value: name the action the arguments are for`,
			},
		},
		"metrics": {
			in: `
metrics:
  address: http://prometheus:9090
  interval: often
  tls.insecureSkipVerify: "true"
`,
			want: []string{
				`metrics.interval: Invalid value: "often": must be a duration such as "30s"`,
				`metrics.tls.insecureSkipVerify: Forbidden: unknown field (known: "address", "interval", "type")`,
			},
		},
		"not a mapping": {
			in:   `- actions`,
			want: []string{`<nil>: Invalid value: a Volcano scheduler configuration must be a mapping with actions and tiers`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, errs := translateYAML(t, tc.in)
			if diff := cmp.Diff(tc.want, errorStrings(errs)); diff != "" {
				t.Errorf("Translate errors (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestOriginsRemap(t *testing.T) {
	_, origins, errs := translateYAML(t, `
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: nvidia.com/gpu
configurations:
- name: preempt
  arguments:
    topologyAwarePreemptWorkerNum: 0
`)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := field.ErrorList{
		field.Invalid(field.NewPath("actions").Index(1), "allocate", "x"),
		field.Invalid(field.NewPath("tiers").Index(0).Child("plugins").Index(0).Child("args", "weight"), 10, "x"),
		field.Invalid(field.NewPath("tiers").Index(0).Child("plugins").Index(0).Child("args", "resources").Key("nvidia.com/gpu"), 1, "x"),
		field.Invalid(field.NewPath("preemption", "workers"), 0, "x"),
		field.Invalid(field.NewPath("tiers").Index(0).Child("plugins").Index(0).Child("name"), "binpack", "x"),
	}
	want := []string{
		`actions: Invalid value: "allocate": x`,
		`tiers[0].plugins[0].arguments[binpack.weight]: Invalid value: 10: x`,
		`tiers[0].plugins[0].arguments[binpack.resources]: Invalid value: 1: x`,
		`configurations[0].arguments[topologyAwarePreemptWorkerNum]: Invalid value: 0: x`,
		`tiers[0].plugins[0].name: Invalid value: "binpack": x`,
	}
	if diff := cmp.Diff(want, errorStrings(origins.Remap(in))); diff != "" {
		t.Errorf("Remap (-want,+got):\n%s", diff)
	}
	if got := in[1].Field; got != "tiers[0].plugins[0].args.weight" {
		t.Errorf("Remap changed its input: %s", got)
	}
}
