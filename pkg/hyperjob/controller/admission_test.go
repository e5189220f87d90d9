package controller_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	testingtraining "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/hyperjob/controller"
	hyperjobwebhook "github.com/caldera-sh/caldera/pkg/hyperjob/webhook"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

// TestFederation: on the Karmada API server the webhook knows the
// members east and west of 128 GPUs each: it refuses a cluster name that
// is no member's and a maxDomains of 1 for 256 GPUs, and admits with a
// warning a HyperJob larger than the whole federation.
func TestFederation(t *testing.T) {
	members := []clusterv1alpha1.Cluster{}
	for _, name := range []string{"east", "west"} {
		members = append(members, clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1alpha1.ClusterStatus{
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("128"), corev1.ResourceCPU: resource.MustParse("1024")}},
		}})
	}
	w := hyperjobwebhook.New()
	w.Federation = controller.Admission(func(context.Context) ([]clusterv1alpha1.Cluster, error) { return members, nil }, nil)
	gpus := func(total int32) *testingtraining.ReplicatedJobWrapper {
		return testingtraining.MakeReplicatedJob("trainer", 2).Request("nvidia.com/gpu", "8").Split(trainingv1alpha1.SplitModeStatic, total, "nvidia.com/gpu")
	}
	cases := map[string]struct {
		hj      *trainingv1alpha1.HyperJob
		want    []metav1.StatusCause
		warning string
	}{
		"fits": {hj: testingtraining.MakeHyperJob("llm", "ns").MaxDomains(2).ReplicatedJob(gpus(256)).Obj()},
		"unknown cluster": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(gpus(16).Clusters("east", "north")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.replicatedJobs[0].clusterNames[1]",
				`Invalid value: "north": no member cluster has this name (members: east, west)`)},
		},
		"maxDomains too small": {
			hj: testingtraining.MakeHyperJob("llm", "ns").MaxDomains(1).ReplicatedJob(gpus(256)).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.maxDomains",
				`Invalid value: 1: the HyperJob needs 2 clusters even with every member empty: replicated job "trainer": 1 children of nvidia.com/gpu 128 do not fit in the 1 clusters already used, the most maxDomains allows`)},
		},
		"larger than the federation": {
			hj:      testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(gpus(512)).Obj(),
			warning: `the HyperJob does not fit the federation even with every member empty (replicated job "trainer": 2 children of nvidia.com/gpu 256 do not fit: the roomiest allowed cluster, east, is short of nvidia.com/gpu 128); it waits until members with room join`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			warnings, err := w.ValidateCreate(t.Context(), tc.hj)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("causes (-want,+got):\n%s", diff)
			}
			if got := strings.Join(warnings, "; "); got != tc.warning {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
		})
	}
}
