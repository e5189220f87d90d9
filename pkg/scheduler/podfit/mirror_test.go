package podfit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	k8sframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestAlikePodsShareWhatTheirPodInfoDerives: a pod alike to the one whose
// PodInfo was made last takes its resources and affinity terms, yet refers
// to itself; a pod not alike gets its own. Each must equal the PodInfo
// kube-scheduler would make of the pod afresh.
func TestAlikePodsShareWhatTheirPodInfoDerives(t *testing.T) {
	pod := func(ns, name, cpu string) *corev1.Pod {
		p := st.MakePod(ns, name).Req("cpu", cpu, "memory", "1Gi").PodAntiAffinity(hostKey, "app", "web").Obj()
		p.UID = types.UID(ns + "/" + name)
		return p
	}
	pods := []*corev1.Pod{
		pod("a", "p0", "1"),
		pod("a", "p1", "1"), // alike p0
		pod("a", "p2", "2"), // asks for more
		pod("b", "p3", "2"), // another namespace: its terms select in b
		pod("b", "p4", "2"), // alike p3
	}
	var infos []*k8sframework.PodInfo
	for _, p := range pods {
		pi := podInfoOf(api.NewTaskInfo(p, "job"))
		if pi.Pod != p {
			t.Fatalf("%s: PodInfo refers to pod %s", p.Name, pi.Pod.Name)
		}
		fresh, _ := k8sframework.NewPodInfo(p)
		if got, want := pi.CalculateResource(), fresh.CalculateResource(); !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s: resources %+v, want %+v", p.Name, got, want)
		}
		if !equality.Semantic.DeepEqual(pi.RequiredAntiAffinityTerms, fresh.RequiredAntiAffinityTerms) {
			t.Errorf("%s: anti-affinity terms %+v, want %+v", p.Name, pi.RequiredAntiAffinityTerms, fresh.RequiredAntiAffinityTerms)
		}
		infos = append(infos, pi)
	}
	if &infos[1].RequiredAntiAffinityTerms[0] != &infos[0].RequiredAntiAffinityTerms[0] {
		t.Error("p1, alike p0, worked out its PodInfo afresh; want p0's shared")
	}
	if &infos[2].RequiredAntiAffinityTerms[0] == &infos[1].RequiredAntiAffinityTerms[0] {
		t.Error("p2, asking for more than p1, shares p1's PodInfo")
	}
	if &infos[3].RequiredAntiAffinityTerms[0] == &infos[2].RequiredAntiAffinityTerms[0] {
		t.Error("p3, in another namespace than p2, shares p2's PodInfo")
	}
}
