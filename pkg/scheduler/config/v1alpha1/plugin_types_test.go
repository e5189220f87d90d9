package v1alpha1

import (
	"reflect"
	"testing"
)

func TestPluginConfigEnabled(t *testing.T) {
	cases := map[string]struct {
		plugin PluginConfig
		point  ExtensionPoint
		want   bool
	}{
		"unset switch means enabled": {
			plugin: PluginConfig{Name: "gang"},
			point:  Preemptable,
			want:   true,
		},
		"switch set to false": {
			plugin: PluginConfig{Name: "gang", EnablePreemptable: new(false)},
			point:  Preemptable,
			want:   false,
		},
		"switch set to true": {
			plugin: PluginConfig{Name: "gang", EnablePreemptable: new(true)},
			point:  Preemptable,
			want:   true,
		},
		"another switch does not count": {
			plugin: PluginConfig{Name: "gang", EnablePreemptable: new(false)},
			point:  JobOrder,
			want:   true,
		},
		"an enabled-spelled switch": {
			plugin: PluginConfig{Name: "network-topology-aware", EnableHyperNodeOrder: new(false)},
			point:  HyperNodeOrder,
			want:   false,
		},
		"unknown extension point": {
			plugin: PluginConfig{Name: "gang"},
			point:  "Hierarchy",
			want:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.plugin.Enabled(tc.point); got != tc.want {
				t.Errorf("Enabled(%s) = %t, want %t", tc.point, got, tc.want)
			}
		})
	}
}

func TestPluginConfigHierarchyEnabled(t *testing.T) {
	cases := map[string]struct {
		enable *bool
		want   bool
	}{
		"unset means off": {enable: nil, want: false},
		"false":           {enable: new(false), want: false},
		"true":            {enable: new(true), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := PluginConfig{Name: "capacity", EnableHierarchy: tc.enable}
			if got := p.HierarchyEnabled(); got != tc.want {
				t.Errorf("HierarchyEnabled() = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestEverySwitchHasOneExtensionPoint guards against a switch added to
// PluginConfig without its extension point, or mapped to the wrong one:
// turning each switch off must turn off exactly one point.
func TestEverySwitchHasOneExtensionPoint(t *testing.T) {
	points := []ExtensionPoint{
		JobOrder, NamespaceOrder, JobReady, JobPipelined, TaskOrder, Preemptable, Reclaimable, Preemptive,
		QueueOrder, ClusterOrder, Predicate, BestNode, NodeOrder, TargetJob, ReservedNodes, JobEnqueued,
		Victim, JobStarving, Overused, Allocatable, HyperNodeOrder, HyperNodeGradient, SubJobReady,
		SubJobPipelined, SubJobOrder,
	}
	rt := reflect.TypeFor[PluginConfig]()
	covered := map[ExtensionPoint]string{}
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type != reflect.TypeFor[*bool]() || f.Name == "EnableHierarchy" {
			continue
		}
		var p PluginConfig
		reflect.ValueOf(&p).Elem().Field(i).Set(reflect.ValueOf(new(false)))
		var off []ExtensionPoint
		for _, point := range points {
			if !p.Enabled(point) {
				off = append(off, point)
			}
		}
		if len(off) != 1 {
			t.Errorf("%s=false turns off %v, want exactly one extension point", f.Name, off)
			continue
		}
		if prev, dup := covered[off[0]]; dup {
			t.Errorf("%s and %s both switch %s", prev, f.Name, off[0])
		}
		covered[off[0]] = f.Name
	}
	if len(covered) != len(points) {
		t.Errorf("%d of %d extension points have a switch", len(covered), len(points))
	}
}
