package podfit

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
)

func TestPluginsPerExtensionPoint(t *testing.T) {
	e, _ := newTestEvaluator(t)
	filters := []string{
		"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
		"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
		"InterPodAffinity", "NodeDeclaredFeatures",
	}
	want := map[string][]string{
		"PreFilter": filters,
		"Filter":    filters,
		"PreScore": {
			"TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
			"InterPodAffinity", "NodeResourcesBalancedAllocation",
		},
		"Score": {
			"TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
			"InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality",
		},
		"Reserve": {"VolumeBinding"},
		"PreBind": {"VolumeBinding"},
	}
	if diff := cmp.Diff(want, e.Plugins()); diff != "" {
		t.Errorf("plugins (-want,+got):\n%s", diff)
	}
}

// The registry must build the plugins kube-scheduler builds: every name is
// in the in-tree registry.
func TestRegistryIsInTree(t *testing.T) {
	inTree := plugins.NewInTreeRegistry()
	for name := range newRegistry(plfeatureDefaults()) {
		if _, ok := inTree[name]; !ok {
			t.Errorf("plugin %q is not in kube-scheduler's in-tree registry", name)
		}
	}
	profile, err := newProfile(ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		got = append(got, p.Name)
	}
	want := slices.Concat(podPlugins, inertPlugins)
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile plugins (-want,+got):\n%s", diff)
	}
}
