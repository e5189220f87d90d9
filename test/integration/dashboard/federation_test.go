//go:build integration

package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

// federation makes two members (one Ready), a Job placed on the Ready
// one, and one held by its queue's capability, with the event
// caldera-global writes for it; it returns the held Job's reason.
func federation(t *testing.T, c client.Client) string {
	t.Helper()
	ctx := t.Context()
	res := func(cpu, memory string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
	for _, m := range []struct {
		name  string
		ready metav1.ConditionStatus
	}{{"member-1", metav1.ConditionTrue}, {"member-2", metav1.ConditionFalse}} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m.name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: "Push", Region: "eu-west"}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		cl.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: m.ready, Reason: "ClusterReady",
			Message: "cluster is healthy and ready to accept workloads", LastTransitionTime: metav1.Now()}}
		if m.ready != metav1.ConditionTrue {
			cl.Status.Conditions[0].Reason, cl.Status.Conditions[0].Message = "ClusterNotReachable", "cluster is not reachable"
		}
		cl.Status.NodeSummary = &clusterv1alpha1.NodeSummary{TotalNum: 4, ReadyNum: 4}
		cl.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: res("64", "256Gi"), Allocated: res("24", "96Gi")}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "training"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	held := time.Now().Add(-3 * time.Minute).UTC().Format(time.RFC3339)
	for _, b := range []struct {
		job     string
		cluster string
	}{{"train-0", "member-1"}, {"train-1", ""}} {
		rb := &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: b.job + "-job", Annotations: map[string]string{dispatch.QueueOfBindingAnnotation: "research"}},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource:   workv1alpha2.ObjectReference{APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Namespace: ns, Name: b.job},
				Suspension: &workv1alpha2.Suspension{Scheduling: new(true)},
			},
		}
		if b.cluster != "" {
			rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: b.cluster, Replicas: 2}}
		} else {
			rb.Annotations[dispatch.HeldSinceAnnotation] = held
		}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	const why = `queue "research" would hold cpu 40, over its capability by cpu 8`
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: "train-1.held"},
		InvolvedObject: corev1.ObjectReference{APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Namespace: ns, Name: "train-1"},
		Reason:         string(dispatch.RuleCapability), Message: "held: " + why, Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "caldera-global"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
	}
	if err := c.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	return why
}

func TestFederationPageInABrowser(t *testing.T) {
	k := fw.StartKarmada(t)
	kc, kubeconfig := k.Client, k.APIServer.Kubeconfig
	why := federation(t, kc)
	base := dashboard(t, fw.Kubeconfig(), "--karmada-kubeconfig", kubeconfig)
	ctx := browser(t)

	do(t, ctx, "opening the federation page", chromedp.Navigate(base+"/#federation"),
		chromedp.WaitVisible(chromedp.CSS(`#members tr[data-member="member-2"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#held tr[data-held="training/train-1-job"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav a[data-view="federation"]`)))
	eventually(t, 30*time.Second, "the page shows the members and the held job as the API says", func() string {
		row := func(sel string) string {
			return read(t, ctx, "reading "+sel, chromedp.Text(chromedp.CSS(sel)))
		}
		var wrong []string
		if got := row(`#members tr[data-member="member-1"] td:nth-child(2)`); got != "Ready" {
			wrong = append(wrong, "member-1 shown "+got)
		}
		if got := row(`#members tr[data-member="member-2"] td:nth-child(2)`); got != "NotReady" {
			wrong = append(wrong, "member-2 shown "+got)
		}
		if got := row(`#members tr[data-member="member-1"] td[data-resource="cpu"]`); !strings.Contains(got, "24 / 64") {
			wrong = append(wrong, "member-1 cpu shown "+got)
		}
		if got := row(`#held tr[data-held="training/train-1-job"] .why`); got != why {
			wrong = append(wrong, fmt.Sprintf("train-1's reason shown %q, want %q", got, why))
		}
		if got := row(`#held tr[data-held="training/train-1-job"] .rule`); got != string(dispatch.RuleCapability) {
			wrong = append(wrong, "train-1's rule shown "+got)
		}
		if n := read(t, ctx, "counting held rows", chromedp.Evaluate[int](`document.querySelectorAll("#held tbody tr").length`)); n != 1 {
			wrong = append(wrong, fmt.Sprintf("%d held rows, want 1 (train-0 is placed)", n))
		}
		return strings.Join(wrong, "; ")
	})
	shot(t, ctx, "dashboard-federation.png", "")
}
