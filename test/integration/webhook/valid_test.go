//go:build integration

package webhook

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	testingbus "github.com/caldera-sh/caldera/apis/bus/v1alpha1/testing"
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	testingdd "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	testingtopo "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	testingtraining "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestValidObjectsAreDefaulted creates valid objects and reads them back
// with the webhook's defaults applied.
func TestValidObjectsAreDefaulted(t *testing.T) {
	fixtures(t)

	t.Run("job", func(t *testing.T) {
		j := testingbatch.MakeJob("defaulted", ns).PriorityClassName("high").Plugin("pytorch").
			Task(testingbatch.MakeTask("", 2)).
			Task(testingbatch.MakeTask("", 3).MinAvailable(1)).Obj()
		create(t, j)
		got := getJob(t, "defaulted")
		type view struct {
			Queue        string
			MinAvailable int32
			MaxRetry     int32
			Plugins      map[string][]string
			Names        []string
			TaskMin      []int32
			TaskRetry    []int32
		}
		v := view{Queue: got.Spec.Queue, MinAvailable: got.Spec.MinAvailable, MaxRetry: got.Spec.MaxRetry, Plugins: got.Spec.Plugins}
		for _, task := range got.Spec.Tasks {
			v.Names = append(v.Names, task.Name)
			v.TaskMin = append(v.TaskMin, ptr.Deref(task.MinAvailable, -1))
			v.TaskRetry = append(v.TaskRetry, task.MaxRetry)
		}
		want := view{
			Queue: "default", MinAvailable: 3, MaxRetry: 3,
			Plugins: map[string][]string{"pytorch": {}, "svc": {}},
			Names:   []string{"default0", "default1"}, TaskMin: []int32{2, 1}, TaskRetry: []int32{3, 3},
		}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("stored job (-want,+got):\n%s", diff)
		}
	})

	t.Run("job update re-applying the manifest", func(t *testing.T) {
		create(t, testingbatch.MakeJob("reapplied", ns).Queue("team-a").Task(testingbatch.MakeTask("", 2)).Obj())
		// The manifest again, with one change the update rules allow: the
		// defaulted fields it omits are filled in again, so only the
		// scale changes.
		again := testingbatch.MakeJob("reapplied", ns).Queue("team-a").Task(testingbatch.MakeTask("", 4)).Obj()
		again.ResourceVersion = getJob(t, "reapplied").ResourceVersion
		if err := fw.Client.Update(t.Context(), again); err != nil {
			t.Fatalf("updating the job from its manifest: %v", err)
		}
		got := getJob(t, "reapplied")
		if got.Spec.Tasks[0].Name != "default0" || got.Spec.Tasks[0].Replicas != 4 || got.Spec.MinAvailable != 4 {
			t.Errorf("stored task %q with %d replicas and minAvailable %d, want default0, 4, 4",
				got.Spec.Tasks[0].Name, got.Spec.Tasks[0].Replicas, got.Spec.MinAvailable)
		}
	})

	t.Run("podgroup takes its namespace's queue", func(t *testing.T) {
		create(t, namespace(nsTeam+"-pg", map[string]string{schedulingv1beta1.QueueNameAnnotation: "team-a"}))
		pg := testingsched.MakePodGroup("defaulted", nsTeam+"-pg").MinMember(1).
			SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "racks"}).Obj()
		create(t, pg)
		var got schedulingv1beta1.PodGroup
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), &got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Queue != "team-a" || ptr.Deref(got.Spec.SubGroupPolicy[0].MinSubGroups, -1) != 0 {
			t.Errorf("stored queue %q and minSubGroups %v, want team-a and 0", got.Spec.Queue, got.Spec.SubGroupPolicy[0].MinSubGroups)
		}
	})

	t.Run("queue", func(t *testing.T) {
		q := queue("legacy-ml").Hierarchy("legacy/ml", "2/8").Obj()
		create(t, q)
		var got schedulingv1beta1.Queue
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(q), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{schedulingv1beta1.HierarchyAnnotation: "root/legacy/ml", schedulingv1beta1.HierarchyWeightsAnnotation: "1/2/8"}
		if diff := cmp.Diff(want, got.Annotations); diff != "" {
			t.Errorf("stored annotations (-want,+got):\n%s", diff)
		}
		if got.Spec.Parent != "root" || got.Spec.Weight != 1 || !ptr.Deref(got.Spec.Reclaimable, false) {
			t.Errorf("stored parent %q weight %d reclaimable %v, want root, 1, true", got.Spec.Parent, got.Spec.Weight, got.Spec.Reclaimable)
		}
	})

	t.Run("queue hierarchy within the parent's amounts, then deleted", func(t *testing.T) {
		child := queue("eng-small").Parent("eng").Deserved(res("cpu", "4")).Guarantee(res("cpu", "2")).Capability(res("cpu", "16")).Obj()
		create(t, child)
		if err := fw.Client.Delete(t.Context(), child); err != nil {
			t.Errorf("deleting an empty leaf queue: %v", err)
		}
	})

	t.Run("hyperjob", func(t *testing.T) {
		hj := testingtraining.MakeHyperJob("defaulted", ns).ReplicatedJob(testingtraining.MakeReplicatedJob("trainer", 0).
			Template(testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("", 2)).Obj().Spec)).Obj()
		create(t, hj)
		var got trainingv1alpha1.HyperJob
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(hj), &got); err != nil {
			t.Fatal(err)
		}
		rj := got.Spec.ReplicatedJobs[0]
		if rj.Replicas != 1 || rj.TemplateSpec.Tasks[0].Name != "default0" || rj.TemplateSpec.MinAvailable != 2 {
			t.Errorf("stored replicas %d, task %q, minAvailable %d; want 1, default0, 2", rj.Replicas, rj.TemplateSpec.Tasks[0].Name, rj.TemplateSpec.MinAvailable)
		}
	})

	t.Run("datasourceclaim", func(t *testing.T) {
		dsc := testingdd.MakeDataSourceClaim("defaulted", ns, "amoro", "table", "db.t").Workload("batch.volcano.sh/v1alpha1", "Job", "", "train").Obj()
		create(t, dsc)
		var got ddv1alpha1.DataSourceClaim
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(dsc), &got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Workload.Namespace != ns {
			t.Errorf("stored workload namespace %q, want %q", got.Spec.Workload.Namespace, ns)
		}
	})

	t.Run("accepted as they are", func(t *testing.T) {
		held := getJob(t, "held")
		create(t,
			testingdd.MakeDataSource("valid-ds", "amoro", "table", "db.t").Clusters("east", "west").Obj(),
			testingtopo.MakeHyperNode("valid-rack", 1).ExactNode("node-1").RegexNodes("^rack1-").Obj(),
			testingbus.MakeCommand("valid-abort", ns, busv1alpha1.AbortJobAction).TargetJob("held").TargetUID(held.UID).Obj(),
			testingbus.MakeCommand("valid-close", ns, busv1alpha1.CloseQueueAction).TargetQueue("toggle").Obj(),
			st.MakePod(ns, "valid-pod").Annotation(schedulingv1beta1.QueueNameAnnotation, "team-a").Obj(),
			st.MakePod(ns, "valid-pod-group").Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "pg-open").Obj(),
			// Pods of other schedulers are not checked.
			st.MakePod(ns, "other-scheduler").SchedulerName("default-scheduler").Annotation(schedulingv1beta1.QueueNameAnnotation, "nope").Obj(),
		)
	})

	t.Run("job scaling in a closed queue", func(t *testing.T) {
		create(t, job("scaled").Queue("toggle").Obj())
		setQueueState(t, "toggle", schedulingv1beta1.QueueStateClosed)
		defer setQueueState(t, "toggle", schedulingv1beta1.QueueStateOpen)
		poll.Eventually(t, t.Context(), 30*time.Second, "scale the job", func() (bool, string) {
			j := getJob(t, "scaled")
			j.Spec.Tasks[0].Replicas = 3
			return succeeded(fw.Client.Update(t.Context(), j))
		})
	})
}
