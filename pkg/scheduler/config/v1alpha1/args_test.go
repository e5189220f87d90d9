package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDecodePluginArgs(t *testing.T) {
	path := field.NewPath("tiers").Index(0).Child("plugins").Index(0).Child("args")
	cases := map[string]struct {
		plugin   PluginConfig
		want     PluginArgs
		wantErrs []string
	}{
		"no arguments are the defaults": {
			plugin: PluginConfig{Name: BinpackPlugin},
			want:   &BinpackArgs{Weight: new(int32(1)), CPU: new(int32(1)), Memory: new(int32(1))},
		},
		"given arguments are kept": {
			plugin: PluginConfig{Name: BinpackPlugin, Args: runtime.RawExtension{Raw: []byte(`{"weight":10,"resources":{"nvidia.com/gpu":2}}`)}},
			want: &BinpackArgs{Weight: new(int32(10)), CPU: new(int32(1)), Memory: new(int32(1)),
				Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 2}},
		},
		"proportional reservations default per resource": {
			plugin: PluginConfig{Name: PredicatesPlugin, Args: runtime.RawExtension{Raw: []byte(`{"proportional":{"resources":{"nvidia.com/gpu":{"cpu":"4"}}}}`)}},
			want: func() PluginArgs {
				a := defaultPredicatesArgs()
				a.Proportional = &ProportionalPredicate{Resources: map[corev1.ResourceName]ResourceReservation{
					"nvidia.com/gpu": {CPU: new(resource.MustParse("4")), Memory: new(resource.MustParse("1G"))},
				}}
				return a
			}(),
		},
		"network-topology-aware defaults": {
			plugin: PluginConfig{Name: NetworkTopologyAwarePlugin},
			want: &NetworkTopologyAwareArgs{Weight: new(int32(1)), BinpackCPU: new(int32(1)), BinpackMemory: new(int32(1)),
				NormalPodBinpack: new(true), NormalPodFading: new(0.8)},
		},
		"nodegroup defaults": {
			plugin: PluginConfig{Name: NodeGroupPlugin},
			want:   &NodeGroupArgs{Strict: new(true), EnablePreferredOrder: new(false)},
		},
		"nodegroup keeps what is set": {
			plugin: PluginConfig{Name: NodeGroupPlugin, Args: runtime.RawExtension{Raw: []byte(`{"strict":false}`)}},
			want:   &NodeGroupArgs{Strict: new(false), EnablePreferredOrder: new(false)},
		},
		"nodegroup rejects a misspelt switch": {
			plugin:   PluginConfig{Name: NodeGroupPlugin, Args: runtime.RawExtension{Raw: []byte(`{"strikt":false}`)}},
			wantErrs: []string{`tiers[0].plugins[0].args.strikt: Forbidden: unknown field; did you mean "strict"?`},
		},
		"resource-strategy-fit defaults": {
			plugin: PluginConfig{Name: ResourceStrategyFitPlugin, Args: runtime.RawExtension{Raw: []byte(`{"sra":{"policy":"proportional","resources":{"nvidia.com/gpu":1}}}`)}},
			want: &ResourceStrategyFitArgs{
				Weight: new(int32(10)),
				Resources: map[string]ResourceStrategy{
					"cpu":    {Type: LeastAllocated, Weight: new(int32(1))},
					"memory": {Type: LeastAllocated, Weight: new(int32(1))},
				},
				SRA: &ScarceResourceAvoidance{
					Policy: SRAProportional, Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 1}, RetentionWeight: new(int32(1)),
					Proportional: map[corev1.ResourceName]ResourceReservation{
						"nvidia.com/gpu": {CPU: new(resource.MustParse("1")), Memory: new(resource.MustParse("1G"))},
					},
				},
			},
		},
		"plugin without typed arguments": {
			plugin: PluginConfig{Name: GangPlugin},
		},
		"field names are case-sensitive": {
			plugin:   PluginConfig{Name: BinpackPlugin, Args: runtime.RawExtension{Raw: []byte(`{"Weight":10}`)}},
			wantErrs: []string{`tiers[0].plugins[0].args.Weight: Forbidden: unknown field; did you mean "weight"?`},
		},
		"duplicate field": {
			plugin:   PluginConfig{Name: OvercommitPlugin, Args: runtime.RawExtension{Raw: []byte(`{"factor":1.5,"factor":2}`)}},
			wantErrs: []string{`tiers[0].plugins[0].args.factor: Duplicate value: field given more than once`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := DecodePluginArgs(&tc.plugin, path)
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Fatalf("errors (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodePluginArgs (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPluginArgsValidate(t *testing.T) {
	path := field.NewPath("args")
	cases := map[string]struct {
		args PluginArgs
		want []string
	}{
		"binpack defaults": {args: &BinpackArgs{}},
		"binpack negative weights": {
			args: &BinpackArgs{CPU: new(int32(-1)), Memory: new(int32(-2)), Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": -3}},
			want: []string{
				`args.cpu: Invalid value: -1: must be greater than or equal to 0`,
				`args.memory: Invalid value: -2: must be greater than or equal to 0`,
				`args.resources[nvidia.com/gpu]: Invalid value: -3: must be greater than or equal to 0`,
			},
		},
		"binpack resources name cpu or an invalid name": {
			args: &BinpackArgs{Resources: map[corev1.ResourceName]int32{"cpu": 1, "nvidia.com/gpu/": 1}},
			want: []string{
				`args.resources[cpu]: Invalid value: "cpu": cpu and memory have fields of their own`,
				`args.resources[nvidia.com/gpu/]: Invalid value: "nvidia.com/gpu/": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
			},
		},
		"nodeorder negative weight": {
			args: &NodeOrderArgs{PodTopologySpreadWeight: new(int32(-1))},
			want: []string{`args.podTopologySpreadWeight: Invalid value: -1: must be greater than or equal to 0`},
		},
		"overcommit factors below 1": {
			args: &OvercommitArgs{Factor: new(0.9), ResourceFactors: map[corev1.ResourceName]float64{"memory": 1, "cpu": 0.5}},
			want: []string{
				`args.factor: Invalid value: 0.9: must be at least 1`,
				`args.resourceFactors[cpu]: Invalid value: 0.5: must be at least 1`,
			},
		},
		"predicates volume binding": {
			args: &PredicatesArgs{
				VolumeBindingTimeout: duration(0),
				VolumeBindingShape:   []UtilizationShapePoint{{Utilization: 50, Score: 11}, {Utilization: 40, Score: 0}, {Utilization: 101, Score: -1}},
			},
			want: []string{
				`args.volumeBindingTimeout: Invalid value: "0s": must be positive`,
				`args.volumeBindingShape[0].score: Invalid value: 11: must be between 0 and 10`,
				`args.volumeBindingShape[1].utilization: Invalid value: 40: must be greater than the previous point's`,
				`args.volumeBindingShape[2].utilization: Invalid value: 101: must be between 0 and 100`,
				`args.volumeBindingShape[2].score: Invalid value: -1: must be between 0 and 10`,
			},
		},
		"predicates proportional": {
			args: &PredicatesArgs{Proportional: &ProportionalPredicate{Resources: map[corev1.ResourceName]ResourceReservation{
				"nvidia.com/gpu": {CPU: new(resource.MustParse("-1"))},
			}}},
			want: []string{`args.proportional.resources[nvidia.com/gpu].cpu: Invalid value: "-1": must not be negative`},
		},
		"predicates proportional without resources": {
			args: &PredicatesArgs{Proportional: &ProportionalPredicate{}},
			want: []string{`args.proportional.resources: Required value: name at least one resource`},
		},
		"resource-strategy-fit": {
			args: &ResourceStrategyFitArgs{
				Weight: new(int32(-1)),
				Resources: map[string]ResourceStrategy{
					"cpu":            {Type: "Spread"},
					"memory":         {},
					"nvidia.com/*":   {Type: MostAllocated, Weight: new(int32(-2))},
					"a*b*":           {Type: MostAllocated},
					"example.com/x/": {Type: LeastAllocated},
				},
				SRA: &ScarceResourceAvoidance{
					Policy:       "keep",
					Resources:    map[corev1.ResourceName]int32{"cpu": 1},
					Proportional: map[corev1.ResourceName]ResourceReservation{"nvidia.com/gpu": {}},
				},
			},
			want: []string{
				`args.weight: Invalid value: -1: must be greater than or equal to 0`,
				`args.resources[a*b*]: Invalid value: "a*b*": "*" may appear only once, at the end`,
				`args.resources[cpu].type: Unsupported value: "Spread": supported values: "MostAllocated", "LeastAllocated"`,
				`args.resources[example.com/x/]: Invalid value: "example.com/x/": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
				`args.resources[memory].type: Required value: must be MostAllocated or LeastAllocated`,
				`args.resources[nvidia.com/*].weight: Invalid value: -2: must be greater than or equal to 0`,
				`args.sra.policy: Unsupported value: "keep": supported values: "retention", "proportional"`,
				`args.sra.resources[cpu]: Invalid value: "cpu": cpu and memory have fields of their own`,
				`args.sra.proportional: Invalid value: "": applies only with policy proportional`,
				`args.sra.proportional[nvidia.com/gpu]: Invalid value: "nvidia.com/gpu": must be one of sra.resources`,
			},
		},
		"network-topology-aware": {
			args: &NetworkTopologyAwareArgs{Weight: new(int32(-1)), NormalPodFading: new(-0.1)},
			want: []string{
				`args.weight: Invalid value: -1: must be greater than or equal to 0`,
				`args.normalPodFading: Invalid value: -0.1: must be greater than or equal to 0`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.args.Default()
			if diff := cmp.Diff(tc.want, errorStrings(tc.args.Validate(path))); diff != "" {
				t.Errorf("Validate (-want,+got):\n%s", diff)
			}
		})
	}
}
