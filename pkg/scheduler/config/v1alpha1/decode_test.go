package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	cases := map[string]struct {
		json     string
		want     *SchedulerConfiguration
		wantErrs []string
	}{
		"minimal": {
			json: `{"apiVersion":"scheduler.config.caldera.sh/v1alpha1","kind":"SchedulerConfiguration","actions":["allocate"]}`,
			want: func() *SchedulerConfiguration {
				c := &SchedulerConfiguration{Actions: []string{"allocate"}}
				c.APIVersion, c.Kind = "scheduler.config.caldera.sh/v1alpha1", "SchedulerConfiguration"
				return c
			}(),
		},
		"unknown fields are named with their path and a suggestion": {
			json: `{"apiVersion":"scheduler.config.caldera.sh/v1alpha1","kind":"SchedulerConfiguration",
				"tiers":[{"plugins":[{"name":"gang","enabledJobOrder":false}]}],"binder":{"concurency":8},"colour":"red"}`,
			want: func() *SchedulerConfiguration {
				c := &SchedulerConfiguration{Tiers: []Tier{{Plugins: []PluginConfig{{Name: "gang"}}}}}
				c.APIVersion, c.Kind = "scheduler.config.caldera.sh/v1alpha1", "SchedulerConfiguration"
				return c
			}(),
			wantErrs: []string{
				`tiers[0].plugins[0].enabledJobOrder: Forbidden: unknown field; did you mean "enableJobOrder"?`,
				`binder.concurency: Forbidden: unknown field; did you mean "concurrency"?`,
				`colour: Forbidden: unknown field`,
			},
		},
		"wrong apiVersion and kind": {
			json: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration"}`,
			want: func() *SchedulerConfiguration {
				c := &SchedulerConfiguration{}
				c.APIVersion, c.Kind = "kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"
				return c
			}(),
			wantErrs: []string{
				`apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1": supported values: "scheduler.config.caldera.sh/v1alpha1"`,
				`kind: Unsupported value: "KubeSchedulerConfiguration": supported values: "SchedulerConfiguration"`,
			},
		},
		"a value of the wrong type stops decoding": {
			json:     `{"apiVersion":"scheduler.config.caldera.sh/v1alpha1","kind":"SchedulerConfiguration","actions":"allocate"}`,
			wantErrs: []string{`<nil>: Invalid value: cannot unmarshal string into Go struct field SchedulerConfiguration.actions of type []string`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := Decode([]byte(tc.json))
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, argsAsJSON); diff != "" {
				t.Errorf("Decode (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	known := KnownPlugins()
	cases := map[string]struct {
		name string
		want string
		ok   bool
	}{
		"missing letter":                {name: "priorty", want: "priority", ok: true},
		"swapped letters":               {name: "porportion", want: "proportion", ok: true},
		"extra letter":                  {name: "binpackk", want: "binpack", ok: true},
		"wrong separators":              {name: "network_topology_aware", want: "network-topology-aware", ok: true},
		"far from anything":             {name: "kube-batch", want: "", ok: false},
		"too short to tell":             {name: "dr", want: "", ok: false},
		"exact names are not suggested": {name: "gang", want: "", ok: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Suggest(tc.name, known)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Suggest(%q) = %q, %t; want %q, %t", tc.name, got, ok, tc.want, tc.ok)
			}
		})
	}
}
