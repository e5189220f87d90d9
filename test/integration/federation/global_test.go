//go:build integration

package federation

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

const globalConfigName = "caldera-global-test"

// startGlobal runs caldera-global in this process against the API server
// until the test ends, and returns once its webhook answers. The options
// may be changed first.
func startGlobal(t *testing.T, change ...func(*options.Options)) {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	health, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := options.NewOptions()
	o.Kubeconfig = fw.Kubeconfig()
	o.BindAddress, o.Port = "127.0.0.1", port
	o.CertDir = filepath.Join(t.TempDir(), "certs")
	o.URLBase = fmt.Sprintf("https://127.0.0.1:%d", port)
	o.ExtraSANs = []string{"127.0.0.1"}
	o.WebhookConfigName = globalConfigName
	o.HealthProbeBindAddress = fmt.Sprintf("127.0.0.1:%d", health)
	o.LeaderElect = false
	o.Heartbeat = time.Second
	for _, c := range change {
		c(o)
	}
	c, err := component.Configure(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// exited: the wait below saw caldera-global end.
	exited := false
	go func() { done <- app.Run(ctx, c) }()
	t.Cleanup(func() {
		// The webhook fails closed: take its configuration away first, so
		// that later tests can create bindings.
		_ = client.IgnoreNotFound(fw.Client.Delete(context.Background(),
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: globalConfigName}}))
		_ = client.IgnoreNotFound(fw.Client.Delete(context.Background(),
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: globalConfigName}}))
		cancel()
		if exited {
			return
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	poll.Eventually(t, t.Context(), time.Minute, "caldera-global's webhook", func() (bool, string) {
		select {
		case err := <-done:
			exited = true
			t.Fatalf("waiting for caldera-global's webhook: caldera-global exited: %v", err)
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, "readyz: " + resp.Status
		}
		// The API server picks the configuration up asynchronously.
		probe := binding("default", "probe")
		probe.Spec.Suspension = nil
		if err := fw.Client.Create(t.Context(), probe, client.DryRunAll); err != nil {
			return false, err.Error()
		}
		suspended := probe.Spec.Suspension != nil && probe.Spec.Suspension.Scheduling != nil && *probe.Spec.Suspension.Scheduling
		return suspended, "a new binding not suspended"
	})
}

// TestGlobal runs caldera-global: bindings of queued work are suspended at
// creation whatever their creator wrote, those that fit are released by
// the dispatcher, the others held; bindings of work in no queue pass
// untouched; a queued Deployment's binding is released once its queue has
// room.
func TestGlobal(t *testing.T) {
	const ns = "global"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	member := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "global-member"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if err := c.Create(ctx, member); err != nil {
		t.Fatal(err)
	}
	member.Status = clusterv1alpha1.ClusterStatus{
		Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")}},
	}
	if err := c.Status().Update(ctx, member); err != nil {
		t.Fatal(err)
	}
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "global-q"},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Capability: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	startGlobal(t)

	// Two 2-CPU jobs in a queue capped at 2 CPUs, their bindings created
	// unsuspended: the webhook suspends both, the dispatcher releases one.
	for _, name := range []string{"first", "second"} {
		if err := c.Create(ctx, job(ns, name, "global-q")); err != nil {
			t.Fatal(err)
		}
		rb := binding(ns, name)
		rb.Spec.Suspension = &workv1alpha2.Suspension{Dispatching: new(true)}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		if !*rb.Spec.Suspension.Scheduling || !*rb.Spec.Suspension.Dispatching {
			t.Errorf("%s created with suspension %+v, want scheduling suspended and dispatching kept", rb.Name, rb.Spec.Suspension)
		}
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "the first released, the second held", func() (bool, string) {
		a, b := held(t, ns, "first-job"), held(t, ns, "second-job")
		return !a && b, fmt.Sprintf("first suspended %v, second %v", a, b)
	})

	// A Deployment in no queue passes untouched; one naming a queue does
	// not.
	for name, labels := range map[string]map[string]string{"plain": nil, "queued": {"volcano.sh/queue-name": "global-q"}} {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}},
		}}
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-deployment"},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}}}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		got := rb.Spec.Suspension != nil && rb.Spec.Suspension.Scheduling != nil && *rb.Spec.Suspension.Scheduling
		if want := labels != nil; got != want {
			t.Errorf("binding of Deployment %s: scheduling suspended %v, want %v", name, got, want)
		}
	}
	// The queued Deployment asks for nothing: it fits the queue at once.
	poll.Eventually(t, t.Context(), 20*time.Second, "the queued Deployment released", func() (bool, string) {
		return !held(t, ns, "queued-deployment"), "still held"
	})
}
