package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func diamond(policy flowv1alpha1.RetainPolicy) *flowv1alpha1.JobFlow {
	dep := func(name string, targets ...string) flowv1alpha1.Flow {
		f := flowv1alpha1.Flow{Name: name}
		if len(targets) > 0 {
			f.DependsOn = &flowv1alpha1.DependsOn{Targets: targets}
		}
		return f
	}
	return &flowv1alpha1.JobFlow{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "jf-uid"},
		Spec: flowv1alpha1.JobFlowSpec{JobRetainPolicy: policy, Flows: []flowv1alpha1.Flow{
			dep("prep"), dep("train", "prep"), dep("eval", "prep"), dep("report", "train", "eval"),
		}},
	}
}

func templates(names ...string) map[string]*flowv1alpha1.JobTemplate {
	out := map[string]*flowv1alpha1.JobTemplate{}
	for _, n := range names {
		out[n] = &flowv1alpha1.JobTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n, Labels: map[string]string{"step": n}},
			Spec: bt.MakeJob("", "").Task(bt.MakeTask("w", 2)).Obj().Spec}
	}
	return out
}

func jobs(phases map[string]batchv1alpha1.JobPhase) map[string]*batchv1alpha1.Job {
	out := map[string]*batchv1alpha1.Job{}
	for n, p := range phases {
		out["p-"+n] = &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-" + n, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Status: batchv1alpha1.JobStatus{State: batchv1alpha1.JobState{Phase: p, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}}
	}
	return out
}

func names(js []*batchv1alpha1.Job) string {
	var out []string
	for _, j := range js {
		out = append(out, j.Name)
	}
	return strings.Join(out, ",")
}

func TestDecide(t *testing.T) {
	all := templates("prep", "train", "eval", "report")
	for _, tc := range []struct {
		name            string
		jf              *flowv1alpha1.JobFlow
		tmpls           map[string]*flowv1alpha1.JobTemplate
		jobs            map[string]batchv1alpha1.JobPhase
		create, delete  string
		phase           flowv1alpha1.Phase
		pending, events string
	}{
		{name: "the first flow starts", jf: diamond(""), tmpls: all,
			create: "p-prep", phase: flowv1alpha1.Running, pending: "p-prep,p-train,p-eval,p-report",
			events: "SuccessfulCreate: created job p-prep from JobTemplate prep"},
		{name: "nothing more while the first runs", jf: diamond(""), tmpls: all, jobs: map[string]batchv1alpha1.JobPhase{"prep": batchv1alpha1.JobRunning},
			phase: flowv1alpha1.Running, pending: "p-train,p-eval,p-report"},
		{name: "both branches start once it completes", jf: diamond(""), tmpls: all, jobs: map[string]batchv1alpha1.JobPhase{"prep": batchv1alpha1.JobCompleted},
			create: "p-train,p-eval", phase: flowv1alpha1.Running, pending: "p-train,p-eval,p-report",
			events: "SuccessfulCreate: created job p-train from JobTemplate train; SuccessfulCreate: created job p-eval from JobTemplate eval"},
		{name: "the join waits for both", jf: diamond(""), tmpls: all,
			jobs:  map[string]batchv1alpha1.JobPhase{"prep": batchv1alpha1.JobCompleted, "train": batchv1alpha1.JobCompleted, "eval": batchv1alpha1.JobRunning},
			phase: flowv1alpha1.Running, pending: "p-report"},
		{name: "a missing template is said", jf: diamond(""), tmpls: templates("train", "eval", "report"),
			phase: flowv1alpha1.Pending, pending: "p-prep,p-train,p-eval,p-report",
			events: "TemplateNotFound: flow prep waits for JobTemplate ns/prep"},
		{name: "a failed job fails the flow, and nothing after it starts", jf: diamond(""), tmpls: all,
			jobs:  map[string]batchv1alpha1.JobPhase{"prep": batchv1alpha1.JobCompleted, "train": batchv1alpha1.JobFailed, "eval": batchv1alpha1.JobCompleted},
			phase: flowv1alpha1.Failed, pending: "p-report",
			events: "Failed: 2 of 4 jobs completed, 1 failed or terminated"},
		{name: "all completed: succeeded, jobs deleted under delete", jf: diamond(flowv1alpha1.Delete), tmpls: all,
			jobs:   map[string]batchv1alpha1.JobPhase{"prep": batchv1alpha1.JobCompleted, "train": batchv1alpha1.JobCompleted, "eval": batchv1alpha1.JobCompleted, "report": batchv1alpha1.JobCompleted},
			delete: "p-prep,p-train,p-eval,p-report", phase: flowv1alpha1.Succeed,
			events: "Succeed: 4 of 4 jobs completed, 0 failed or terminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Flow: tc.jf, Templates: tc.tmpls, Jobs: jobs(tc.jobs), Now: now})
			var events []string
			for _, e := range d.Events {
				events = append(events, e.Reason+": "+e.Message)
			}
			got := fmt.Sprintf("create %q delete %q phase %s pending %q events %q", names(d.Create), names(d.Delete), d.Status.State.Phase, strings.Join(d.Status.PendingJobs, ","), strings.Join(events, "; "))
			want := fmt.Sprintf("create %q delete %q phase %s pending %q events %q", tc.create, tc.delete, tc.phase, tc.pending, tc.events)
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestAPatchedJob(t *testing.T) {
	jf := diamond("")
	jf.Spec.Flows[0].Patch = &flowv1alpha1.Patch{JobSpec: &runtime.RawExtension{Raw: []byte(`{"queue":"fast","minAvailable":1}`)}}
	d := Decide(Input{Flow: jf, Templates: templates("prep"), Now: now})
	if len(d.Create) != 1 {
		t.Fatalf("created %v", names(d.Create))
	}
	j := d.Create[0]
	if j.Spec.Queue != "fast" || j.Spec.MinAvailable != 1 || len(j.Spec.Tasks) != 1 || j.Spec.Tasks[0].Replicas != 2 {
		t.Errorf("spec %+v", j.Spec)
	}
	if j.Labels["step"] != "prep" || j.Labels[FlowLabel] != "p" || j.Annotations[TemplateAnnotation] != "prep" || j.OwnerReferences[0].UID != "jf-uid" {
		t.Errorf("meta %+v", j.ObjectMeta)
	}
}

func TestTaskStatusProbe(t *testing.T) {
	jf := diamond("")
	jf.Spec.Flows[1].DependsOn.Probe = &flowv1alpha1.Probe{TaskStatusList: []flowv1alpha1.TaskStatus{{TaskName: "w", Phase: "Running"}}}
	js := jobs(map[string]batchv1alpha1.JobPhase{"prep": batchv1alpha1.JobRunning})
	d := Decide(Input{Flow: jf, Templates: templates("train", "eval"), Jobs: js, Now: now})
	if len(d.Create) != 0 {
		t.Fatalf("created %s before prep's task w runs", names(d.Create))
	}
	js["p-prep"].Status.TaskStatusCount = map[string]batchv1alpha1.TaskState{"w": {Phase: map[corev1.PodPhase]int32{corev1.PodRunning: 2}}}
	d = Decide(Input{Flow: jf, Templates: templates("train", "eval"), Jobs: js, Now: now})
	if names(d.Create) != "p-train" {
		t.Errorf("created %q, want p-train once prep's task w runs (eval waits for prep to complete)", names(d.Create))
	}
}

func TestASucceededFlowStaysSucceeded(t *testing.T) {
	jf := diamond(flowv1alpha1.Delete)
	jf.Status.State.Phase = flowv1alpha1.Succeed
	jf.Status.CompletedJobs = []string{"p-prep", "p-train", "p-eval", "p-report"}
	d := Decide(Input{Flow: jf, Templates: templates("prep", "train", "eval", "report"), Jobs: jobs(map[string]batchv1alpha1.JobPhase{"report": batchv1alpha1.JobCompleted}), Now: now})
	if len(d.Create) != 0 || names(d.Delete) != "p-report" || d.Status.State.Phase != flowv1alpha1.Succeed || len(d.Status.CompletedJobs) != 4 {
		t.Errorf("create %q delete %q status %+v", names(d.Create), names(d.Delete), d.Status)
	}
}
