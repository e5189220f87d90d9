//go:build integration

package federation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/hyperjob/lifecycle"
	"github.com/caldera-sh/caldera/test/poll"
)

// llm is a HyperJob of 256 GPUs split statically into two children of
// 16 workers with 8 GPUs each.
func llm(ns, name string) *trainingv1alpha1.HyperJob {
	gpus := corev1.ResourceList{gpu: resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("16")}
	hj := &trainingv1alpha1.HyperJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{{
			Name: "train", Replicas: 2,
			SplitPolicy: &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeStatic, Accelerators: new(int32(256)), AcceleratorType: new(string(gpu))},
			TemplateSpec: batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: "hj", Tasks: []batchv1alpha1.TaskSpec{{
				Name: "worker", Replicas: 16,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
					Name: "main", Image: "trainer", Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus},
				}}}},
			}}},
		}}},
	}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	return hj
}

// bindChild does what Karmada's detector does for a child: a binding of
// the Job with one component per task.
func bindChild(t *testing.T, ns, name string) {
	t.Helper()
	var job batchv1alpha1.Job
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-job"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: ns, Name: name, UID: string(job.UID)},
		},
	}
	for _, task := range job.Spec.Tasks {
		rb.Spec.Components = append(rb.Spec.Components, workv1alpha2.Component{Name: task.Name, Replicas: task.Replicas,
			ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: task.Template.Spec.Containers[0].Resources.Requests}})
	}
	if err := fw.Client.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
}

func setChildPhase(t *testing.T, ns, name string, phase batchv1alpha1.JobPhase, running int32) {
	t.Helper()
	var job batchv1alpha1.Job
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
		t.Fatal(err)
	}
	job.Status.State.Phase, job.Status.Running = phase, running
	if phase == batchv1alpha1.JobCompleted {
		job.Status.Running, job.Status.Succeeded = 0, running
	}
	if err := fw.Client.Status().Update(t.Context(), &job); err != nil {
		t.Fatal(err)
	}
}

// children maps the HyperJob's children to the cluster their policy pins
// them to, and to their plan.
func hyperJobChildren(t *testing.T, ns, hj string) (pins map[string]string, plans map[string]string) {
	t.Helper()
	var jobs batchv1alpha1.JobList
	if err := fw.Client.List(t.Context(), &jobs, client.InNamespace(ns), client.MatchingLabels{trainingv1alpha1.HyperJobNameLabel: hj}); err != nil {
		t.Fatal(err)
	}
	pins, plans = map[string]string{}, map[string]string{}
	for _, j := range jobs.Items {
		if j.DeletionTimestamp != nil {
			continue
		}
		var pp policyv1alpha1.PropagationPolicy
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(&j), &pp); err == nil && pp.Spec.Placement.ClusterAffinity != nil {
			pins[j.Name] = strings.Join(pp.Spec.Placement.ClusterAffinity.ClusterNames, ",")
		} else {
			pins[j.Name] = "?"
		}
		plans[j.Name] = j.Annotations[trainingv1alpha1.PlanAnnotation]
	}
	return pins, plans
}

func hjPhase(t *testing.T, ns, name string) trainingv1alpha1.HyperJobPhase {
	t.Helper()
	var hj trainingv1alpha1.HyperJob
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &hj); err != nil {
		return trainingv1alpha1.HyperJobPhase(err.Error())
	}
	return hj.Status.Phase
}

func hjCondition(t *testing.T, ns, name, typ string) string {
	t.Helper()
	var hj trainingv1alpha1.HyperJob
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &hj); err != nil {
		return err.Error()
	}
	c := meta.FindStatusCondition(hj.Status.Conditions, typ)
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

// TestHyperJob runs caldera-global's HyperJob controller and dispatcher
// against members hj-a and hj-b of 128 GPUs each (the test plays
// Karmada's detector and status copying):
//   - a 256-GPU HyperJob becomes two 128-GPU children, one pinned to each
//     member, labelled and annotated with its plan; the first child's
//     binding stays held until the second's exists, then both are
//     released together; the children's states and pod counts add up in
//     the HyperJob's status, and it completes when both do; deleting it
//     deletes the children and their policies;
//   - a HyperJob of 0 replicas is refused by its schema; caldera-global's
//     webhook refuses one naming a cluster that is no member, or needing
//     more members than its maxDomains;
//   - with hj-b full, a second one waits saying why, and is planned when
//     hj-b has room; its children, released but never running, are
//     rolled back after the start timeout and planned again.
func TestHyperJob(t *testing.T) {
	const ns = "hyperjobs"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "hj"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	members := map[string]*clusterv1alpha1.Cluster{}
	setGPUs := func(name string, allocated string) {
		cl := members[name]
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{
				Allocatable: corev1.ResourceList{gpu: resource.MustParse("128"), corev1.ResourceCPU: resource.MustParse("4096")},
				Allocated:   corev1.ResourceList{gpu: resource.MustParse(allocated)},
			},
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"hj-a", "hj-b"} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		members[name] = cl
		setGPUs(name, "0")
	}
	startGlobal(t, func(o *options.Options) { o.HyperJobStartTimeout = 5 * time.Second })

	// The webhook knows the members.
	nowhere := llm(ns, "nowhere")
	nowhere.Spec.ReplicatedJobs[0].ClusterNames = []string{"hj-a", "hj-c"}
	err := c.Create(ctx, nowhere)
	if err == nil || !strings.Contains(err.Error(), `spec.replicatedJobs[0].clusterNames[1]: Invalid value: "hj-c": no member cluster has this name (members: `) {
		t.Fatalf("a HyperJob naming no member: %v", err)
	}
	// replicas: 0 as a user writes it (Go would omit the zero).
	typed := llm(ns, "zero")
	typed.APIVersion, typed.Kind = trainingv1alpha1.SchemeGroupVersion.String(), "HyperJob"
	raw, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	zero := &unstructured.Unstructured{}
	if err := zero.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	rjs, _, _ := unstructured.NestedSlice(zero.Object, "spec", "replicatedJobs")
	rjs[0].(map[string]any)["replicas"] = int64(0)
	if err := unstructured.SetNestedSlice(zero.Object, rjs, "spec", "replicatedJobs"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, zero); err == nil || !strings.Contains(err.Error(), "spec.replicatedJobs[0].replicas") {
		t.Fatalf("a HyperJob of 0 replicas: %v", err)
	}
	narrow := llm(ns, "narrow")
	narrow.Spec.MaxDomains = new(int32(1))
	if err := c.Create(ctx, narrow); err == nil || !strings.Contains(err.Error(), "spec.maxDomains: Invalid value: 1: the HyperJob needs 2 clusters even with every member empty") {
		t.Fatalf("a HyperJob needing more clusters than maxDomains: %v", err)
	}

	if err := c.Create(ctx, llm(ns, "llm")); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "two children pinned one to each member", func() (bool, string) {
		pins, _ := hyperJobChildren(t, ns, "llm")
		return fmt.Sprint(pins) == "map[llm-train-0:hj-a llm-train-1:hj-b]", fmt.Sprint(pins)
	})
	var child batchv1alpha1.Job
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "llm-train-1"}, &child); err != nil {
		t.Fatal(err)
	}
	if w := child.Spec.Tasks[0]; w.Replicas != 16 || child.Labels[trainingv1alpha1.ReplicatedJobNameLabel] != "train" ||
		child.Annotations[trainingv1alpha1.ChildrenAnnotation] != "2" || len(child.OwnerReferences) != 1 {
		t.Errorf("child: %d workers, labels %v, annotations %v, owners %v", w.Replicas, child.Labels, child.Annotations, child.OwnerReferences)
	}
	if got := hjCondition(t, ns, "llm", lifecycle.ConditionPlanned); got != "True Planned: 2 child jobs" {
		t.Errorf("Planned: %s", got)
	}
	if got := hjPhase(t, ns, "llm"); got != trainingv1alpha1.HyperJobPending {
		t.Errorf("phase %s before its children run", got)
	}

	// All together: one binding alone waits. The dispatcher marks a
	// binding it decides to hold, or places it: wait for its verdict.
	bindChild(t, ns, "llm-train-0")
	poll.Eventually(t, t.Context(), 20*time.Second, "the dispatcher's verdict on llm-train-0", func() (bool, string) {
		rb := getBinding(t, ns, "llm-train-0-job")
		_, marked := rb.Annotations[dispatch.HeldSinceAnnotation]
		return marked || len(rb.Spec.Clusters) > 0, fmt.Sprintf("annotations %v, clusters %v", rb.Annotations, rb.Spec.Clusters)
	})
	if !held(t, ns, "llm-train-0-job") {
		t.Fatal("a child was released before its sibling's binding existed")
	}
	bindChild(t, ns, "llm-train-1")
	poll.Eventually(t, t.Context(), 20*time.Second, "both children released", func() (bool, string) {
		a, b := held(t, ns, "llm-train-0-job"), held(t, ns, "llm-train-1-job")
		return !a && !b, fmt.Sprintf("suspended %v %v", a, b)
	})
	setChildPhase(t, ns, "llm-train-0", batchv1alpha1.JobRunning, 16)
	setChildPhase(t, ns, "llm-train-1", batchv1alpha1.JobRunning, 16)
	poll.Eventually(t, t.Context(), 20*time.Second, "32 workers running in the HyperJob's status", func() (bool, string) {
		var hj trainingv1alpha1.HyperJob
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "llm"}, &hj); err != nil {
			return false, err.Error()
		}
		raw, _ := json.Marshal(hj.Status.ReplicatedJobsStatus)
		return len(hj.Status.ReplicatedJobsStatus) == 1 && hj.Status.ReplicatedJobsStatus[0].Running == 32 &&
			len(hj.Status.ReplicatedJobsStatus[0].JobStates) == 2 && *hj.Status.SplitCount == 2 &&
			fmt.Sprint(hj.Status.ReplicatedJobsStatus[0].JobClusters) == "map[llm-train-0:hj-a llm-train-1:hj-b]" &&
			hj.Status.Phase == trainingv1alpha1.HyperJobRunning, string(raw) + " " + string(hj.Status.Phase)
	})
	setChildPhase(t, ns, "llm-train-0", batchv1alpha1.JobCompleted, 16)
	setChildPhase(t, ns, "llm-train-1", batchv1alpha1.JobCompleted, 16)
	poll.Eventually(t, t.Context(), 20*time.Second, "the HyperJob completed", func() (bool, string) {
		got := hjCondition(t, ns, "llm", trainingv1alpha1.HyperJobCompleted)
		return got == "True Completed: all 2 child jobs completed" && hjPhase(t, ns, "llm") == trainingv1alpha1.HyperJobCompletedPhase, got
	})
	if err := c.Delete(ctx, &trainingv1alpha1.HyperJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm"}}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "the HyperJob, its children and their policies gone", func() (bool, string) {
		var pps policyv1alpha1.PropagationPolicyList
		var jobs batchv1alpha1.JobList
		if err := c.List(ctx, &pps, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if err := c.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "llm"}, &trainingv1alpha1.HyperJob{})
		return len(pps.Items) == 0 && len(jobs.Items) == 0 && apierrors.IsNotFound(err), fmt.Sprintf("%d policies, %d jobs, %v", len(pps.Items), len(jobs.Items), err)
	})
	// Karmada deletes the bindings of deleted templates.
	for _, name := range []string{"llm-train-0-job", "llm-train-1-job"} {
		if err := c.Delete(ctx, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}

	// With hj-b full, nothing; then room.
	setGPUs("hj-b", "128")
	if err := c.Create(ctx, llm(ns, "llm2")); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "llm2 waits saying why", func() (bool, string) {
		got := hjCondition(t, ns, "llm2", lifecycle.ConditionPlanned)
		return strings.HasPrefix(got, `False Waiting: no plan fits the clusters now: replicated job "train": 1 children of cpu 256, nvidia.com/gpu 128 do not fit`) &&
			hjPhase(t, ns, "llm2") == trainingv1alpha1.HyperJobPending, got
	})
	if pins, _ := hyperJobChildren(t, ns, "llm2"); len(pins) != 0 {
		t.Errorf("children made without a plan: %v", pins)
	}
	setGPUs("hj-b", "0")
	var firstPlan string
	poll.Eventually(t, t.Context(), 20*time.Second, "llm2 planned when hj-b has room", func() (bool, string) {
		pins, plans := hyperJobChildren(t, ns, "llm2")
		firstPlan = plans["llm2-train-0"]
		return len(pins) == 2 && firstPlan != "", fmt.Sprint(pins)
	})
	bindChild(t, ns, "llm2-train-0")
	bindChild(t, ns, "llm2-train-1")
	poll.Eventually(t, t.Context(), 20*time.Second, "llm2's children released", func() (bool, string) {
		return !held(t, ns, "llm2-train-0-job") && !held(t, ns, "llm2-train-1-job"), "held"
	})
	// They never run: after the 5-second start timeout, a new plan.
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	poll.Eventually(t, t.Context(), 30*time.Second, "llm2 rolled back and planned again", func() (bool, string) {
		_, plans := hyperJobChildren(t, ns, "llm2")
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=llm2,reason=RolledBack"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint("no RolledBack event ", err)
		}
		return len(plans) == 2 && plans["llm2-train-0"] != firstPlan && plans["llm2-train-0"] != "", fmt.Sprint(plans)
	})
}

// TestHyperJobRestart: caldera-global stopped after writing a plan and
// before making any child (the plan is on the HyperJob, nothing else).
// The next caldera-global makes exactly the planned children, where the
// plan put them, though a new split would place them otherwise.
func TestHyperJobRestart(t *testing.T) {
	const ns = "hyperjob-restart"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "hj-restart"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, name := range []string{"hjr-a", "hjr-b"} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{gpu: resource.MustParse("512"), corev1.ResourceCPU: resource.MustParse("4096")}},
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	hj := llm(ns, "resumed")
	hj.Spec.ReplicatedJobs[0].TemplateSpec.Queue = "hj-restart"
	hj.Spec.ReplicatedJobs[0].ClusterNames = []string{"hjr-a", "hjr-b"}
	if err := c.Create(ctx, hj); err != nil {
		t.Fatal(err)
	}
	// The plan a split would not make (both children fit hjr-a), written
	// as caldera-global writes it.
	rec := lifecycle.Record{ID: "beforecrash", Generation: hj.Generation, Attempt: 1, Children: []lifecycle.PlannedChild{
		{Name: "resumed-train-0", ReplicatedJob: "train", Index: 0, Cluster: "hjr-b", Pods: 16},
		{Name: "resumed-train-1", ReplicatedJob: "train", Index: 1, Cluster: "hjr-a", Pods: 16},
	}}
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	patched := hj.DeepCopy()
	patched.Annotations = map[string]string{lifecycle.PlanRecordAnnotation: string(raw)}
	if err := c.Patch(ctx, patched, client.MergeFrom(hj)); err != nil {
		t.Fatal(err)
	}

	startGlobal(t)
	poll.Eventually(t, t.Context(), 20*time.Second, "the planned children, where planned", func() (bool, string) {
		pins, plans := hyperJobChildren(t, ns, "resumed")
		return fmt.Sprint(pins) == "map[resumed-train-0:hjr-b resumed-train-1:hjr-a]" &&
			plans["resumed-train-0"] == "beforecrash" && plans["resumed-train-1"] == "beforecrash", fmt.Sprint(pins, plans)
	})
	var got trainingv1alpha1.HyperJob
	if err := c.Get(ctx, client.ObjectKeyFromObject(hj), &got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[lifecycle.PlanRecordAnnotation] != string(raw) {
		t.Errorf("the plan was replaced: %s", got.Annotations[lifecycle.PlanRecordAnnotation])
	}
}

// TestHyperJobFailurePolicy: with failurePolicy RestartChild and one
// retry, a failed child is made again where it was; when it fails again,
// the retries are used up: the running sibling is deleted and the
// HyperJob has failed, saying why.
func TestHyperJobFailurePolicy(t *testing.T) {
	const ns = "hyperjob-failure"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "hj"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, name := range []string{"hjf-a", "hjf-b"} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{gpu: resource.MustParse("128"), corev1.ResourceCPU: resource.MustParse("4096")}},
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	startGlobal(t)
	hj := llm(ns, "ft")
	hj.Spec.ReplicatedJobs[0].ClusterNames = []string{"hjf-a", "hjf-b"}
	hj.Spec.FailurePolicy = &trainingv1alpha1.FailurePolicy{Action: trainingv1alpha1.RestartChild, MaxRetry: new(int32(1))}
	if err := c.Create(ctx, hj); err != nil {
		t.Fatal(err)
	}
	childUID := func(name string) string {
		var j batchv1alpha1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil || j.DeletionTimestamp != nil {
			return ""
		}
		return string(j.UID)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "two children", func() (bool, string) {
		pins, _ := hyperJobChildren(t, ns, "ft")
		return len(pins) == 2, fmt.Sprint(pins)
	})
	first := childUID("ft-train-1")
	setChildPhase(t, ns, "ft-train-1", batchv1alpha1.JobFailed, 0)
	poll.Eventually(t, t.Context(), 20*time.Second, "the failed child made again, one retry counted", func() (bool, string) {
		var got trainingv1alpha1.HyperJob
		if err := c.Get(ctx, client.ObjectKeyFromObject(hj), &got); err != nil {
			return false, err.Error()
		}
		now := childUID("ft-train-1")
		return now != "" && now != first && got.Status.RetryCount == 1, fmt.Sprintf("uid %s, retries %d", now, got.Status.RetryCount)
	})
	setChildPhase(t, ns, "ft-train-1", batchv1alpha1.JobFailed, 0)
	poll.Eventually(t, t.Context(), 20*time.Second, "the HyperJob failed, its running child gone", func() (bool, string) {
		got := hjCondition(t, ns, "ft", trainingv1alpha1.HyperJobFailed)
		return got == "True Failed: child ft-train-1 failed and the failure policy (RestartChild, 1 of 1 restarts used) fails the HyperJob" &&
			childUID("ft-train-0") == "" && hjPhase(t, ns, "ft") == trainingv1alpha1.HyperJobFailedPhase, got + " " + string(hjPhase(t, ns, "ft"))
	})
}
