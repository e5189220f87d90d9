package api_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestStatusOfPod(t *testing.T) {
	deleted := metav1.Now()
	for name, tc := range map[string]struct {
		pod  *st.PodWrapper
		want api.TaskStatus
	}{
		"pending, no node": {st.MakePod("ns", "p"), api.Pending},
		"pending, on node": {st.MakePod("ns", "p").Node("n"), api.Bound},
		"running, on node": {st.MakePod("ns", "p").Node("n").Phase(corev1.PodRunning), api.Running},
		"succeeded":        {st.MakePod("ns", "p").Node("n").Phase(corev1.PodSucceeded), api.Succeeded},
		"failed":           {st.MakePod("ns", "p").Node("n").Phase(corev1.PodFailed), api.Failed},
		"unknown":          {st.MakePod("ns", "p").Node("n").Phase(corev1.PodUnknown), api.Unknown},
		// A status written by name for an earlier pod of the same name: it
		// holds no node, and must be placed.
		"running, no node": {st.MakePod("ns", "p").Phase(corev1.PodRunning), api.Pending},
	} {
		if got := api.StatusOfPod(tc.pod.Obj()); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning} {
		p := st.MakePod("ns", "p").Node("n").Phase(phase).Obj()
		p.DeletionTimestamp = &deleted
		if got := api.StatusOfPod(p); got != api.Releasing {
			t.Errorf("%s being deleted: %v, want Releasing", phase, got)
		}
	}
}
