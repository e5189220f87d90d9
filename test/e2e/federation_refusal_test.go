//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestFederationMemberRefuses: member-a's admission refuses Jobs in
// namespace "refused" (a ValidatingAdmissionPolicy). A 2-CPU Job
// there, placed in member-a, counts against its queue (capped at 2 CPUs)
// while Karmada retries; after the 5-second apply failure grace it no
// longer does: it is told why, and a Job of another namespace held behind
// it runs. Once the policy goes, Karmada applies the first Job where it was
// placed and it runs there.
func TestFederationMemberRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := startFederationWith(t, ctx, federationOptions{global: func(o *options.Options) { o.ApplyFailureGrace = 5 * time.Second }}, "strict")
	kc := f.karmada
	if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "strict"},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Capability: corev1.ResourceList{corev1.ResourceCPU: cpus(2)}}}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"refused", "accepted"} {
		if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		pp := jobPolicy(ns)
		pp.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member-a"}}
		if err := kc.Create(ctx, pp); err != nil {
			t.Fatal(err)
		}
	}
	// member-a's admission: a ValidatingAdmissionPolicy refusing Jobs
	// in the namespace, in force once a dry run is refused.
	memberA := f.members["member-a"]
	// (Karmada may have copied the namespace there already.)
	if err := memberA.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "refused"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-jobs"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"jobs"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "this team may not run Jobs in this cluster"}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-jobs"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "no-jobs", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": "refused"}}},
		}}
	for _, o := range []client.Object{policy, binding} {
		if err := memberA.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, ctx, time.Minute, "member-a refusing Jobs in refused", func() (bool, string) {
		err := memberA.Create(ctx, trainingJob("refused", "probe", "strict", 1), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "may not run Jobs"), fmt.Sprint(err)
	})

	if err := kc.Create(ctx, trainingJob("refused", "first", "strict", 2)); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, "first placed in member-a", func() (bool, string) {
		cl := placedCluster(t, ctx, f, "refused", "first")
		return cl == "member-a", "placed in " + cl
	})
	if err := kc.Create(ctx, runFor(trainingJob("accepted", "second", "strict", 2), 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(f.cluster.RESTConfig())
	eventOf := func(ns, name, reason string) (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint("no event ", err)
		}
		return true, evs.Items[len(evs.Items)-1].Message
	}
	poll.Eventually(t, ctx, 2*time.Minute, "first told member-a refuses it", func() (bool, string) {
		ok, msg := eventOf("refused", "first", dispatchcontroller.ReasonApplyFailed)
		if !ok {
			var rb workv1alpha2.ResourceBinding
			_ = kc.Get(ctx, client.ObjectKey{Namespace: "refused", Name: "first-job"}, &rb)
			return false, fmt.Sprintf("%s; binding placed in %v, status %+v", msg, rb.Spec.Clusters, rb.Status.AggregatedStatus)
		}
		return ok && strings.Contains(msg, "cluster member-a refuses the job: ") && strings.Contains(msg, "may not run Jobs in this cluster") &&
			strings.Contains(msg, `it no longer counts against queue "strict"`), msg
	})
	poll.Eventually(t, ctx, 2*time.Minute, "second running in member-a, first not", func() (bool, string) {
		r := f.running(t, ctx, "accepted")
		return r["second"] == "member-a", fmt.Sprint(r)
	})
	if r := f.running(t, ctx, "refused"); len(r) != 0 {
		t.Errorf("running in the refusing namespace: %v", r)
	}

	// The member takes it once the policy goes: Karmada applies it where
	// it was placed, and it runs there once second is done (with a real
	// Karmada the queue's capability is copied to the members, whose
	// schedulers hold to it too).
	if err := memberA.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, "first running in member-a", func() (bool, string) {
		r := f.running(t, ctx, "refused")
		return r["first"] == "member-a", fmt.Sprint(r)
	})
	if cl := placedCluster(t, ctx, f, "refused", "first"); cl != "member-a" {
		t.Errorf("first placed in %q after the refusal, want member-a", cl)
	}
}

// placedCluster is where the Job's binding is placed ("" for nowhere yet).
func placedCluster(t *testing.T, ctx context.Context, f *federation, ns, job string) string {
	t.Helper()
	var rb workv1alpha2.ResourceBinding
	if err := f.karmada.Get(ctx, client.ObjectKey{Namespace: ns, Name: job + "-job"}, &rb); err != nil || len(rb.Spec.Clusters) == 0 {
		return ""
	}
	return rb.Spec.Clusters[0].Name
}
