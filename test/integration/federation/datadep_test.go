//go:build integration

package federation

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/datadep"
	datadepcontroller "github.com/caldera-sh/caldera/pkg/datadep/controller"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestDataDependency runs caldera-global with an Amoro catalog on
// loopback (the HTTP lookup contract) over members dd-a and dd-b:
//   - a claim for a table an administrator declared in dd-b binds to that
//     DataSource, and its Job is released to dd-b though dd-a comes first;
//   - a claim for a table the catalog places in dd-b is cached as a
//     DataSource (resolved by the catalog, with its expiry) and its Job
//     goes to dd-b;
//   - a claim for data the catalog does not know is Unresolvable; while
//     the catalog fails, a claim is Pending with ProviderError and its Job
//     held saying why, until its 3-second resolution timeout lets it go
//     anywhere (fallback Anywhere);
//   - a DataSource with reclaimPolicy Delete stays while bound (while
//     another, unbound, is deleted) and is deleted 2 seconds (its
//     ttlSecondsAfterUnbound) after its claim goes.
func TestDataDependency(t *testing.T) {
	const ns = "datadep"
	ctx := t.Context()
	c := fw.Client
	catalogSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q datadep.Query
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch q.Name {
		case "lake.events":
			_ = json.NewEncoder(w).Encode(map[string]any{"clusterNames": []string{"dd-b"}, "ttlSeconds": 3600})
		case "lake.down":
			http.Error(w, "metastore unavailable", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer catalogSrv.Close()

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "dd"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dd-a", "dd-b"} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		// The package's other tests count on the clusters they make.
		t.Cleanup(func() { _ = c.Delete(context.Background(), cl) })
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}},
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	declared := &ddv1alpha1.DataSource{ObjectMeta: metav1.ObjectMeta{Name: "warehouse-orders"}, Spec: ddv1alpha1.DataSourceSpec{
		System: "hive", Type: "table", Name: "warehouse.orders", Locality: &ddv1alpha1.DataSourceLocality{ClusterNames: []string{"dd-b"}}}}
	if err := c.Create(ctx, declared); err != nil {
		t.Fatal(err)
	}
	startGlobal(t, func(o *options.Options) { o.DataProviders = []string{"amoro=" + catalogSrv.URL} })

	// A Job, its binding (as Karmada and the webhook make it), its claim.
	claimed := func(name, system, table string, change func(*ddv1alpha1.DataSourceClaim)) {
		t.Helper()
		if err := c.Create(ctx, job(ns, name, "dd")); err != nil {
			t.Fatal(err)
		}
		cl := &ddv1alpha1.DataSourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: ddv1alpha1.DataSourceClaimSpec{
			System: system, DataSourceType: "table", DataSourceName: table,
			Workload: ddv1alpha1.WorkloadRef{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: name}}}
		if change != nil {
			change(cl)
		}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		rb := binding(ns, name)
		rb.Spec.Suspension = nil
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	releasedTo := func(name string) string {
		var rb workv1alpha2.ResourceBinding
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-job"}, &rb); err != nil {
			return err.Error()
		}
		if len(rb.Spec.Clusters) == 0 {
			return "held"
		}
		return rb.Spec.Clusters[0].Name
	}
	claimState := func(name string) string {
		var cl ddv1alpha1.DataSourceClaim
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cl); err != nil {
			return err.Error()
		}
		cond := meta.FindStatusCondition(cl.Status.Conditions, ddv1alpha1.DataSourceClaimReady)
		if cond == nil {
			return string(cl.Status.Phase)
		}
		return fmt.Sprintf("%s %s %s: %s", cl.Status.Phase, cl.Status.BoundDataSource, cond.Reason, cond.Message)
	}

	claimed("orders", "hive", "warehouse.orders", nil)
	poll.Eventually(t, t.Context(), 20*time.Second, "the declared table's job released to dd-b", func() (bool, string) {
		return releasedTo("orders") == "dd-b" && strings.HasPrefix(claimState("orders"), "Bound warehouse-orders Bound"), releasedTo("orders") + "; " + claimState("orders")
	})

	claimed("events", "amoro", "lake.events", nil)
	cache := datadepcontroller.CacheName(datadep.Query{System: "amoro", Type: "table", Name: "lake.events"})
	poll.Eventually(t, t.Context(), 20*time.Second, "the catalog's answer cached and the job released to dd-b", func() (bool, string) {
		var ds ddv1alpha1.DataSource
		if err := c.Get(ctx, client.ObjectKey{Name: cache}, &ds); err != nil {
			return false, err.Error()
		}
		ok := ds.Status.ResolvedBy == "amoro" && ds.Status.ExpiresAt != nil && ds.Status.BoundClaims == 1 && releasedTo("events") == "dd-b"
		return ok, fmt.Sprintf("%+v; %s; %s", ds.Status, releasedTo("events"), claimState("events"))
	})

	claimed("unknown", "amoro", "lake.nothing", nil)
	poll.Eventually(t, t.Context(), 20*time.Second, "the unknown table's claim unresolvable", func() (bool, string) {
		got := claimState("unknown")
		return got == `Pending  Unresolvable: provider amoro does not know amoro table "lake.nothing": the provider does not know this data`, got
	})

	claimed("outage", "amoro", "lake.down", func(cl *ddv1alpha1.DataSourceClaim) {
		cl.Spec.ResolutionTimeoutSeconds = new(int32(3))
		cl.Spec.Fallback = ddv1alpha1.DataFallbackAnywhere
	})
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	poll.Eventually(t, t.Context(), 10*time.Second, "the outage's job held saying why", func() (bool, string) {
		if !strings.HasPrefix(claimState("outage"), "Pending  ProviderError: provider amoro answered 503 Service Unavailable") {
			return false, claimState("outage")
		}
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=outage,reason=DataNotResolved"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint("no DataNotResolved event ", err, "; ", releasedTo("outage"))
		}
		return releasedTo("outage") == "held" && strings.Contains(evs.Items[0].Message, `waits for the location of amoro table "lake.down"`), evs.Items[0].Message
	})
	poll.Eventually(t, t.Context(), 20*time.Second, "the outage's job released anywhere after its timeout", func() (bool, string) {
		got := releasedTo("outage")
		return got != "held" && !strings.Contains(got, " "), got
	})

	// Two DataSources to delete after their last claim goes, each
	// claimed: scratch (2 seconds after) by tmp, spare (3 seconds after)
	// by spare.
	for _, ds := range []struct {
		name, table, claim string
		ttl                int32
	}{{"scratch", "tmp.scratch", "tmp", 2}, {"spare", "tmp.spare", "spare", 3}} {
		if err := c.Create(ctx, &ddv1alpha1.DataSource{ObjectMeta: metav1.ObjectMeta{Name: ds.name}, Spec: ddv1alpha1.DataSourceSpec{
			System: "hive", Type: "table", Name: ds.table, Locality: &ddv1alpha1.DataSourceLocality{ClusterNames: []string{"dd-a"}},
			ReclaimPolicy: ddv1alpha1.ReclaimPolicyDelete, TTLSecondsAfterUnbound: new(ds.ttl)}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, &ddv1alpha1.DataSourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ds.claim}, Spec: ddv1alpha1.DataSourceClaimSpec{
			System: "hive", DataSourceType: "table", DataSourceName: ds.table,
			Workload: ddv1alpha1.WorkloadRef{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: ds.claim}}}); err != nil {
			t.Fatal(err)
		}
		poll.Eventually(t, t.Context(), 20*time.Second, "claim "+ds.claim+" bound", func() (bool, string) {
			return strings.HasPrefix(claimState(ds.claim), "Bound "+ds.name+" "), claimState(ds.claim)
		})
	}
	// spare loses its claim. The reclaimer deletes it once its TTL has
	// run out: by then scratch, made and bound before, has been bound for
	// longer than its own, shorter TTL, and the reclaimer has judged it
	// (its changes came first) and kept it.
	if err := c.Delete(ctx, &ddv1alpha1.DataSourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spare"}}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "the unclaimed spare DataSource deleted after its TTL", func() (bool, string) {
		var ds ddv1alpha1.DataSource
		err := c.Get(ctx, client.ObjectKey{Name: "spare"}, &ds)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v %+v", err, ds.Status)
	})
	var scratch ddv1alpha1.DataSource
	if err := c.Get(ctx, client.ObjectKey{Name: "scratch"}, &scratch); err != nil {
		t.Fatalf("the DataSource went while bound: %v", err)
	}
	if scratch.Status.BoundClaims != 1 {
		t.Errorf("the bound DataSource counts %d claims, want 1", scratch.Status.BoundClaims)
	}
	// Both DataSources lose their last claim, the retained one first; once
	// the one to delete is gone (its TTL of 2 s ran out after its claim
	// went), the retained one has been unbound longer, and must still be
	// there, counting no claim.
	for _, name := range []string{"orders", "tmp"} {
		if err := c.Delete(ctx, &ddv1alpha1.DataSourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
		poll.Eventually(t, t.Context(), 20*time.Second, "claim "+name+" gone", func() (bool, string) {
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ddv1alpha1.DataSourceClaim{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "the unbound DataSource deleted after its TTL", func() (bool, string) {
		var ds ddv1alpha1.DataSource
		err := c.Get(ctx, client.ObjectKey{Name: "scratch"}, &ds)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v %+v", err, ds.Status)
	})
	var kept ddv1alpha1.DataSource
	if err := c.Get(ctx, client.ObjectKey{Name: "warehouse-orders"}, &kept); err != nil {
		t.Fatalf("the retained DataSource went after its last claim: %v", err)
	}
	if kept.Status.BoundClaims != 0 {
		t.Errorf("the retained DataSource counts %d claims after its last went", kept.Status.BoundClaims)
	}
}
