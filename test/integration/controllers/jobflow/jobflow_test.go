//go:build integration

package jobflow

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestJobFlowRunsItsDAG: a diamond of four flows on the real API server;
// the test plays the Jobs' completion. The first Job starts alone, both
// branches start when it completes, the join waits for both, the flow
// succeeds and, under retain policy delete, its Jobs go. A flow whose
// template does not exist yet starts when it is created.
func TestJobFlowRunsItsDAG(t *testing.T) {
	ctx := t.Context()
	ns := fmt.Sprintf("flow-%d", time.Now().UnixNano()%1e9)
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	defer startController(t)()

	for _, name := range []string{"prep", "train", "eval"} { // "report" comes later
		if err := fw.Client.Create(ctx, &flowv1alpha1.JobTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: bt.MakeJob("", "").Task(bt.MakeTask("w", 1)).Obj().Spec}); err != nil {
			t.Fatal(err)
		}
	}
	dep := func(name string, targets ...string) flowv1alpha1.Flow {
		f := flowv1alpha1.Flow{Name: name}
		if len(targets) > 0 {
			f.DependsOn = &flowv1alpha1.DependsOn{Targets: targets}
		}
		return f
	}
	jf := &flowv1alpha1.JobFlow{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: flowv1alpha1.JobFlowSpec{
		JobRetainPolicy: flowv1alpha1.Delete,
		Flows:           []flowv1alpha1.Flow{dep("prep"), dep("train", "prep"), dep("eval", "prep"), dep("report", "train", "eval")},
	}}
	if err := fw.Client.Create(ctx, jf); err != nil {
		t.Fatal(err)
	}
	jobs := func() string {
		var l batchv1alpha1.JobList
		if err := fw.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range l.Items {
			if j.DeletionTimestamp == nil {
				out = append(out, j.Name)
			}
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	complete := func(name string) {
		t.Helper()
		var j batchv1alpha1.Job
		if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
			t.Fatal(err)
		}
		j.Status.State = batchv1alpha1.JobState{Phase: batchv1alpha1.JobCompleted, LastTransitionTime: metav1.Now()}
		if err := fw.Client.Status().Update(ctx, &j); err != nil {
			t.Fatal(err)
		}
	}
	status := func() flowv1alpha1.JobFlowStatus {
		var got flowv1alpha1.JobFlow
		if err := fw.Client.Get(ctx, client.ObjectKeyFromObject(jf), &got); err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the first job alone", func() (bool, string) {
		st := status()
		return jobs() == "p-prep" && st.State.Phase == flowv1alpha1.Running, jobs() + " " + string(st.State.Phase)
	})
	complete("p-prep")
	poll.Eventually(t, t.Context(), 30*time.Second, "both branches", func() (bool, string) {
		return jobs() == "p-eval,p-prep,p-train", jobs()
	})
	complete("p-train")
	complete("p-eval")
	poll.Eventually(t, t.Context(), 30*time.Second, "the join waiting for its template, said", func() (bool, string) {
		var evs corev1.EventList
		if err := fw.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == "TemplateNotFound" && strings.Contains(e.Message, "flow report waits for JobTemplate") {
				return true, e.Message
			}
		}
		return false, jobs()
	})
	if err := fw.Client.Create(ctx, &flowv1alpha1.JobTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "report"},
		Spec: bt.MakeJob("", "").Task(bt.MakeTask("w", 1)).Obj().Spec}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the join started by its template's arrival", func() (bool, string) {
		return jobs() == "p-eval,p-prep,p-report,p-train", jobs()
	})
	// The flow's status follows the Job it created in a later write.
	poll.Eventually(t, t.Context(), 30*time.Second, "the status listing all four jobs", func() (bool, string) {
		st := status()
		return strings.Join(st.CompletedJobs, ",") == "p-prep,p-train,p-eval" && len(st.JobStatusList) == 4 &&
			st.Conditions["p-prep"].Phase == batchv1alpha1.JobCompleted, fmt.Sprintf("%+v", st)
	})
	poll.Eventually(t, t.Context(), 30*time.Second, "each template listing the job made from it", func() (bool, string) {
		var tmpl flowv1alpha1.JobTemplate
		if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "train"}, &tmpl); err != nil {
			return false, err.Error()
		}
		return strings.Join(tmpl.Status.JobDependsOnList, ",") == "p-train", fmt.Sprint(tmpl.Status.JobDependsOnList)
	})
	before := counted(t, "Succeed")
	complete("p-report")
	poll.Eventually(t, t.Context(), 30*time.Second, "succeeded, its jobs deleted", func() (bool, string) {
		st := status()
		return st.State.Phase == flowv1alpha1.Succeed && jobs() == "", string(st.State.Phase) + " " + jobs()
	})
	poll.Eventually(t, t.Context(), 30*time.Second, "the templates' lists emptied with their jobs", func() (bool, string) {
		var tmpl flowv1alpha1.JobTemplate
		if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prep"}, &tmpl); err != nil {
			return false, err.Error()
		}
		return len(tmpl.Status.JobDependsOnList) == 0, fmt.Sprint(tmpl.Status.JobDependsOnList)
	})
	if got := counted(t, "Succeed"); got != before+1 {
		t.Errorf("caldera_jobflows_finished_total{phase=Succeed} went from %v to %v, want one more", before, got)
	}
}

// counted reads caldera_jobflows_finished_total for a phase from the
// controller manager's registry.
func counted(t *testing.T, phase string) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "caldera_jobflows_finished_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "phase" && l.GetValue() == phase {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no caldera_jobflows_finished_total{phase=%q}", phase)
	return 0
}
