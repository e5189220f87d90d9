//go:build integration

package podgroup

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

func template(app, cpu string, annotations map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}, Annotations: annotations},
		Spec:       podSpec("workloads", cpu),
	}
}

func gang(n int) map[string]string {
	return map[string]string{schedulingv1beta1.GroupMinMemberAnnotation: fmt.Sprint(n)}
}

// oneGroup waits until the namespace's pods with label app=<app> number n,
// all name the same PodGroup and that group is the only one in the
// namespace for them; it returns the group.
func oneGroup(t *testing.T, ns, app string, n int) *schedulingv1beta1.PodGroup {
	t.Helper()
	var group string
	poll.Eventually(t, t.Context(), 60*time.Second, fmt.Sprintf("%d pods of %s in one PodGroup", n, app), func() (bool, string) {
		var list corev1.PodList
		if err := fw.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			return false, err.Error()
		}
		groups := map[string]int{}
		for _, p := range list.Items {
			groups[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]++
		}
		if len(list.Items) != n || len(groups) != 1 || groups[""] != 0 {
			return false, fmt.Sprintf("%d pods, groups %v", len(list.Items), groups)
		}
		for g := range groups {
			group = g
		}
		return true, ""
	})
	pg := &schedulingv1beta1.PodGroup{}
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: group}, pg); err != nil {
		t.Fatalf("the pods name PodGroup %s: %v", group, err)
	}
	return pg
}

func controllerRef(apiVersion, kind, name string, uid string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: new(true)}}
}

func TestWorkloadsShareOneGroup(t *testing.T) {
	createNamespace(t, "workloads")
	startKubeControllerManager(t)
	startController(t)

	t.Run("Deployment", func(t *testing.T) {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "workloads", Name: "web", Annotations: gang(3)},
			Spec: appsv1.DeploymentSpec{
				Replicas: new(int32(3)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: template("web", "1", map[string]string{schedulingv1beta1.QueueNameAnnotation: "serving"}),
			},
		}
		create(t, d)
		pg := oneGroup(t, "workloads", "web", 3)

		var rss appsv1.ReplicaSetList
		if err := fw.Client.List(t.Context(), &rss, client.InNamespace("workloads"), client.MatchingLabels{"app": "web"}); err != nil || len(rss.Items) != 1 {
			t.Fatalf("ReplicaSets of the Deployment: %d, %v", len(rss.Items), err)
		}
		rs := rss.Items[0]
		if want := "podgroup-" + string(rs.UID); pg.Name != want {
			t.Errorf("PodGroup name = %q, want %q (Volcano's name for the ReplicaSet's group)", pg.Name, want)
		}
		wantSpec := schedulingv1beta1.PodGroupSpec{
			MinMember:    3,
			Queue:        "serving",
			MinResources: &corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")},
		}
		if diff := cmp.Diff(wantSpec, pg.Spec); diff != "" {
			t.Errorf("PodGroup spec (-want,+got):\n%s", diff)
		}
		if diff := cmp.Diff(controllerRef("apps/v1", "ReplicaSet", rs.Name, string(rs.UID)), pg.OwnerReferences); diff != "" {
			t.Errorf("owner references (-want,+got):\n%s", diff)
		}

		// Scaled to zero, its group goes, as in Volcano.
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Replicas = new(int32(0))
		if err := fw.Client.Patch(t.Context(), d, patch); err != nil {
			t.Fatal(err)
		}
		poll.Eventually(t, t.Context(), 60*time.Second, "the group of the ReplicaSet scaled to zero deleted", func() (bool, string) {
			err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), &schedulingv1beta1.PodGroup{})
			return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprint(err)
		})
	})

	t.Run("StatefulSet", func(t *testing.T) {
		s := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "workloads", Name: "db", Annotations: gang(2)},
			Spec: appsv1.StatefulSetSpec{
				Replicas:            new(int32(2)),
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Template:            template("db", "500m", nil),
			},
		}
		create(t, s)
		pg := oneGroup(t, "workloads", "db", 2)
		if want := "podgroup-" + string(s.UID); pg.Name != want {
			t.Errorf("PodGroup name = %q, want %q", pg.Name, want)
		}
		if pg.Spec.MinMember != 2 || pg.Spec.Queue != "default" {
			t.Errorf("minMember %d, queue %q; want 2, default", pg.Spec.MinMember, pg.Spec.Queue)
		}
		if diff := cmp.Diff(controllerRef("apps/v1", "StatefulSet", "db", string(s.UID)), pg.OwnerReferences); diff != "" {
			t.Errorf("owner references (-want,+got):\n%s", diff)
		}
	})

	t.Run("Job", func(t *testing.T) {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: "workloads", Name: "etl", Annotations: gang(2)},
			Spec: batchv1.JobSpec{
				Parallelism: new(int32(2)),
				Completions: new(int32(2)),
				Template:    template("etl", "1", nil),
			},
		}
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		create(t, j)
		pg := oneGroup(t, "workloads", "etl", 2)
		if want := "podgroup-" + string(j.UID); pg.Name != want {
			t.Errorf("PodGroup name = %q, want %q", pg.Name, want)
		}
		if pg.Spec.MinMember != 2 {
			t.Errorf("minMember %d, want 2", pg.Spec.MinMember)
		}
	})
}
