//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/hyperjob/lifecycle"
	"github.com/caldera-sh/caldera/test/poll"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// gpuJob is a Volcano Job of workers with 8 GPUs each.
func gpuJob(ns, name, queue string, workers int32) batchv1alpha1.JobSpec {
	req := corev1.ResourceList{gpu: resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("100m")}
	return batchv1alpha1.JobSpec{
		SchedulerName: "volcano", Queue: queue, MinAvailable: workers,
		Tasks: []batchv1alpha1.TaskSpec{{
			Name: "worker", Replicas: workers,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "trainer", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
			}},
		}},
	}
}

// TestFederationHyperJob: members of 128 GPUs each; a 256-GPU HyperJob
// (two children of 16 workers of 8 GPUs) while member-b is full runs
// nothing anywhere and says why; once member-b's work is done, both
// children run, one in each member, and the HyperJob's status counts
// their 32 workers. member-b's own job runs until the test ends it, so
// the HyperJob's wait is seen however slow the machine.
func TestFederationHyperJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := startFederation(t, ctx, 0, "train")
	kc := f.karmada
	const ns = "hyper"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}

	// member-b is full: its own 128-GPU job runs there until it is ended.
	mb := f.members["member-b"]
	if err := mb.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	filler := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "filler"}, Spec: gpuJob(ns, "filler", "train", 16)}
	if err := mb.Create(ctx, filler); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, "the filler running in member-b", func() (bool, string) {
		return f.running(t, ctx, ns)["filler"] == "member-b", fmt.Sprint(f.running(t, ctx, ns))
	})
	// Karmada knows member-b is full: its Cluster's summary, which the
	// HyperJob's plan reads, counts the filler's GPUs.
	poll.Eventually(t, ctx, time.Minute, "member-b's summary counting the filler", func() (bool, string) {
		var cl clusterv1alpha1.Cluster
		if err := kc.Get(ctx, client.ObjectKey{Name: "member-b"}, &cl); err != nil || cl.Status.ResourceSummary == nil {
			return false, fmt.Sprint(err)
		}
		rs := cl.Status.ResourceSummary
		used := rs.Allocated[gpu]
		used.Add(rs.Allocating[gpu])
		return used.Cmp(rs.Allocatable[gpu]) >= 0, fmt.Sprintf("%s of %s GPUs used", used.String(), rs.Allocatable.Name(gpu, resource.DecimalSI).String())
	})

	hj := &trainingv1alpha1.HyperJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm"},
		Spec: trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{{
			Name: "train", Replicas: 2, TemplateSpec: gpuJob(ns, "", "train", 16),
			SplitPolicy: &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeStatic, Accelerators: new(int32(256)), AcceleratorType: new(string(gpu))},
		}}},
	}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	if err := kc.Create(ctx, hj); err != nil {
		t.Fatal(err)
	}
	planned := func() string {
		var got trainingv1alpha1.HyperJob
		if err := kc.Get(ctx, client.ObjectKeyFromObject(hj), &got); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, lifecycle.ConditionPlanned)
		if c == nil {
			return "none"
		}
		return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
	}
	poll.Eventually(t, ctx, time.Minute, "the HyperJob waiting for room", func() (bool, string) {
		got := planned()
		return strings.HasPrefix(got, "False Waiting: no plan fits the clusters now"), got
	})
	if r := f.running(t, ctx, ns); len(r) != 1 {
		t.Fatalf("running %v while the HyperJob cannot run whole: no half of it may hold GPUs", r)
	}
	var children batchv1alpha1.JobList
	if err := f.members["member-a"].List(ctx, &children, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(children.Items) != 0 {
		t.Fatalf("member-a has %d jobs while the HyperJob waits", len(children.Items))
	}

	// Room once the filler is done: both children run, together.
	finishPods(t, ctx, mb, ns, "filler")
	poll.Eventually(t, ctx, 3*time.Minute, "both children running, one in each member", func() (bool, string) {
		r := f.running(t, ctx, ns)
		return r["llm-train-0"] != "" && r["llm-train-1"] != "" && r["llm-train-0"] != r["llm-train-1"], fmt.Sprint(r)
	})
	poll.Eventually(t, ctx, time.Minute, "the HyperJob counting 32 running workers", func() (bool, string) {
		var got trainingv1alpha1.HyperJob
		if err := kc.Get(ctx, client.ObjectKeyFromObject(hj), &got); err != nil {
			return false, err.Error()
		}
		if len(got.Status.ReplicatedJobsStatus) != 1 {
			return false, fmt.Sprint(got.Status)
		}
		rs := got.Status.ReplicatedJobsStatus[0]
		return rs.Running == 32 && len(rs.JobStates) == 2, fmt.Sprintf("running %d, states %v", rs.Running, rs.JobStates)
	})

	// Deleting the HyperJob takes its children and their policies with it
	// (caldera-global holds it with a finalizer until they are gone).
	if err := kc.Delete(ctx, hj); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, "the HyperJob, its child Jobs and their PropagationPolicies gone", func() (bool, string) {
		var left []string
		if err := kc.Get(ctx, client.ObjectKeyFromObject(hj), &trainingv1alpha1.HyperJob{}); !apierrors.IsNotFound(err) {
			left = append(left, fmt.Sprintf("the HyperJob (%v)", err))
		}
		var jobs batchv1alpha1.JobList
		if err := kc.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, j := range jobs.Items {
			left = append(left, "job "+j.Name)
		}
		var policies policyv1alpha1.PropagationPolicyList
		if err := kc.List(ctx, &policies, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, p := range policies.Items {
			left = append(left, "policy "+p.Name)
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
}

// TestFederationHeterogeneous: member-a has two nodes of A100s, member-b a
// node of H100s and one of A100s (node labels only: the Karmada Clusters
// carry no model, and their summaries are alike). caldera-global follows
// the members' nodes and counts free GPUs per model. A HyperJob of two
// automatically split replicated jobs, 64 H100s and 128 A100s, runs the
// H100 child in member-b, the only member with H100s (without pools it
// would go to member-a, first by name), and the A100s in two children:
// one beside it on member-b's A100 node (fewest clusters first), one in
// member-a.
func TestFederationHeterogeneous(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := startFederation(t, ctx, 0, "train")
	kc := f.karmada
	const ns = "mixed"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	rj := func(name, model string, gpus int32) trainingv1alpha1.ReplicatedJob {
		spec := gpuJob(ns, "", "train", 8)
		spec.Tasks[0].Template.Spec.NodeSelector = map[string]string{gpuModelLabel: model}
		return trainingv1alpha1.ReplicatedJob{Name: name, Replicas: 1, TemplateSpec: spec,
			SplitPolicy: &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeAuto, Accelerators: new(gpus), AcceleratorType: new(string(gpu))}}
	}
	hj := &trainingv1alpha1.HyperJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mix"},
		Spec: trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{rj("h100", "H100", 64), rj("a100", "A100", 128)}}}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	if err := kc.Create(ctx, hj); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 3*time.Minute, "each replicated job running where its model is", func() (bool, string) {
		r := f.running(t, ctx, ns)
		return r["mix-h100-0"] == "member-b" && r["mix-a100-0"] == "member-b" && r["mix-a100-1"] == "member-a", fmt.Sprint(r)
	})
	// The member's scheduler put each child on the nodes of its model.
	var pods corev1.PodList
	if err := f.members["member-b"].List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		want := "member-b-0"
		if strings.HasPrefix(p.Name, "mix-a100-") {
			want = "member-b-1"
		}
		if p.Spec.NodeName != want {
			t.Errorf("pod %s on %q, want %s", p.Name, p.Spec.NodeName, want)
		}
	}
}

// finishPods ends a job's running pods: each succeeds a second after it
// is given a run duration (pkg/controlplane/kwokstages).
func finishPods(t *testing.T, ctx context.Context, c client.Client, ns, job string) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{batchv1alpha1.JobNameKey: job}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("job %s/%s has no pods to finish", ns, job)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		patch := client.MergeFrom(p.DeepCopy())
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations["pod.caldera.sh/run-duration"] = "1s"
		if err := c.Patch(ctx, p, patch); err != nil {
			t.Fatal(err)
		}
	}
}
