package overcommit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestOvercommitAdmitsWithinTheFactor(t *testing.T) {
	minCPU := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	snap := api.Build(api.Objects{
		Nodes:  []*corev1.Node{st.MakeNode("n").Alloc("cpu", "10").Obj()},
		Pods:   []*corev1.Pod{st.MakePod("ns", "running").Req("cpu", "4").Node("n").Phase(corev1.PodRunning).Obj()},
		Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{
			schedtesting.MakePodGroup("big", "ns").MinResources(minCPU("8")).Obj(),
			schedtesting.MakePodGroup("more", "ns").MinResources(minCPU("1")).Obj(),
		},
	})
	factor := 1.2
	p, err := New(&configv1alpha1.OvercommitArgs{Factor: &factor}, nil)
	if err != nil {
		t.Fatal(err)
	}
	oc := p.(*Plugin)
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{})
	defer ssn.Close()
	// 10 cpu * 1.2 - 4 used = 8 left.
	if v, r := oc.JobEnqueueable(snap.Jobs["ns/big"]); v != framework.Permit {
		t.Fatalf("8 cpu of 8 left rejected: %v", r)
	}
	oc.JobEnqueued(snap.Jobs["ns/big"])
	v, r := oc.JobEnqueueable(snap.Jobs["ns/more"])
	if v != framework.Reject {
		t.Fatalf("1 cpu with nothing left admitted")
	}
	if want := "the cluster cannot admit the job: its minimum needs 1 cpu, and 0 is left of the cluster's resources times its overcommit factor after running and admitted jobs"; r.Message != want {
		t.Errorf("reason = %q, want %q", r.Message, want)
	}
}
