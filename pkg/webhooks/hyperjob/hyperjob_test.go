package hyperjob_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	testingtraining "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/webhooks/hyperjob"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func TestDefault(t *testing.T) {
	got := testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
		testingtraining.MakeReplicatedJob("trainer", 0).
			Template(testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("", 2)).Obj().Spec)).Obj()
	if err := hyperjob.NewWebhook().Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	rj := got.Spec.ReplicatedJobs[0]
	wantTask := testingbatch.MakeTask("default0", 2).MinAvailable(2).MaxRetry(3).Obj()
	// The schema defaults an absent replicas; a 0 reaching the webhook was
	// written, and is left for validation to refuse.
	if diff := cmp.Diff(int32(0), rj.Replicas); diff != "" {
		t.Errorf("replicas (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(wantTask, rj.TemplateSpec.Tasks[0]); diff != "" {
		t.Errorf("template task (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff("default", rj.TemplateSpec.Queue); diff != "" {
		t.Errorf("template queue (-want,+got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	noImage := testingtraining.MakeReplicatedJob("trainer", 1).Obj()
	noImage.TemplateSpec.Tasks[0].Template.Spec.Containers[0].Image = ""
	cases := map[string]struct {
		hj   *trainingv1alpha1.HyperJob
		want []metav1.StatusCause
		// ignoreMessage compares type and field only.
		ignoreMessage bool
	}{
		"valid": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
				testingtraining.MakeReplicatedJob("trainer", 2).Clusters("east", "west").
					Request("nvidia.com/gpu", "8").Split(trainingv1alpha1.SplitModeStatic, 16, "nvidia.com/gpu")).Obj(),
		},
		"unknown plugin in a template": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
				testingtraining.MakeReplicatedJob("trainer", 1).Template(
					testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("worker", 1)).Plugin("horovod").Obj().Spec)).Obj(),
			want:          []metav1.StatusCause{wt.Cause(wt.NotSupported, "spec.replicatedJobs[0].templateSpec.plugins[horovod]", "")},
			ignoreMessage: true,
		},
		"template pod that cannot be created": {
			hj: func() *trainingv1alpha1.HyperJob {
				hj := testingtraining.MakeHyperJob("llm", "ns").Obj()
				hj.Spec.ReplicatedJobs = []trainingv1alpha1.ReplicatedJob{noImage}
				return hj
			}(),
			want:          []metav1.StatusCause{wt.Cause(wt.Required, "spec.replicatedJobs[0].templateSpec.tasks[0].template.spec.containers[0].image", "")},
			ignoreMessage: true,
		},
		"zero replicas": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(testingtraining.MakeReplicatedJob("trainer", 0)).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.replicatedJobs[0].replicas",
				"Invalid value: 0: must be at least 1: a replicated job makes at least one child job")},
		},
		"accelerator the template does not request": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
				testingtraining.MakeReplicatedJob("trainer", 1).Split(trainingv1alpha1.SplitModeStatic, 8, "nvidia.com/gpu")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.replicatedJobs[0].splitPolicy.acceleratorType",
				`Invalid value: "nvidia.com/gpu": no container of templateSpec requests this resource, so there is nothing to split`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := hyperjob.NewWebhook()
			var opts []cmp.Option
			if tc.ignoreMessage {
				opts = append(opts, wt.IgnoreMessage)
			}
			_, err := w.ValidateCreate(t.Context(), tc.hj)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err), opts...); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
			old := tc.hj.DeepCopy()
			old.Spec.MaxDomains = ptr.To[int32](1)
			_, err = w.ValidateUpdate(t.Context(), old, tc.hj)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err), opts...); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

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
	w := hyperjob.NewWebhook()
	w.Members = func(context.Context) ([]clusterv1alpha1.Cluster, error) { return members, nil }
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
