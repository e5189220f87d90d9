package global

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
)

// TestPropagationLeavesMembersTheirOwn: the policy that copies Queues and
// PriorityClasses to the members selects, by Karmada's rules (kind, then
// the label selector), the user's queues and the PriorityClasses labelled
// for it, and neither the default Queue of deploy/global (each member has
// its own) nor the system PriorityClasses every cluster has.
func TestPropagationLeavesMembersTheirOwn(t *testing.T) {
	raw, err := Manifests.ReadFile("karmada/propagate-queues.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cpp policyv1alpha1.ClusterPropagationPolicy
	if err := yaml.UnmarshalStrict(raw, &cpp); err != nil {
		t.Fatal(err)
	}
	raw, err = Manifests.ReadFile("karmada/default-queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var defaultQueue schedulingv1beta1.Queue
	if err := yaml.UnmarshalStrict(raw, &defaultQueue); err != nil {
		t.Fatal(err)
	}
	selected := func(apiVersion, kind string, objLabels map[string]string) bool {
		for _, sel := range cpp.Spec.ResourceSelectors {
			if sel.APIVersion != apiVersion || sel.Kind != kind {
				continue
			}
			if sel.LabelSelector == nil {
				return true
			}
			s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
			if err != nil {
				t.Fatal(err)
			}
			if s.Matches(labels.Set(objLabels)) {
				return true
			}
		}
		return false
	}
	const queue, pc = "scheduling.volcano.sh/v1beta1", "scheduling.k8s.io/v1"
	got := map[string]bool{
		"a user's queue":               selected(queue, "Queue", nil),
		"the default queue":            selected(queue, "Queue", defaultQueue.Labels),
		"system-node-critical":         selected(pc, "PriorityClass", nil),
		"a PriorityClass labelled":     selected(pc, "PriorityClass", map[string]string{"dispatch.caldera.sh/propagate": "true"}),
		"a PriorityClass not labelled": selected(pc, "PriorityClass", map[string]string{"team": "ml"}),
	}
	want := map[string]bool{
		"a user's queue": true, "the default queue": false, "system-node-critical": false,
		"a PriorityClass labelled": true, "a PriorityClass not labelled": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selected (-want,+got):\n%s", diff)
	}
	if defaultQueue.Name != schedulingv1beta1.DefaultQueue {
		t.Errorf("default-queue.yaml makes queue %q", defaultQueue.Name)
	}
}
