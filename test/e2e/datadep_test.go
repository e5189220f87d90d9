//go:build e2e

package e2e

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/datadep"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestFederationDataDependency: an Amoro catalog on loopback says table
// lake.events is in member-b and fails for lake.down. A Job claiming
// lake.events runs in member-b (member-a would come first without the
// claim); a Job claiming lake.down waits while the catalog fails, then,
// its 10-second resolution timeout past, runs anyway (fallback Anywhere).
func TestFederationDataDependency(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	catalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q datadep.Query
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if q.Name == "lake.events" {
			_ = json.NewEncoder(w).Encode(map[string]any{"clusterNames": []string{"member-b"}, "ttlSeconds": 600})
			return
		}
		http.Error(w, "metastore unavailable", http.StatusServiceUnavailable)
	}))
	defer catalog.Close()
	f := startFederationWith(t, ctx, federationOptions{global: func(o *options.Options) { o.DataProviders = []string{"amoro=" + catalog.URL} }}, "lake")
	kc := f.karmada
	const ns = "lake"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "lake"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, jobPolicy(ns)); err != nil {
		t.Fatal(err)
	}
	for name, table := range map[string]string{"reader": "lake.events", "outage": "lake.down"} {
		claim := &ddv1alpha1.DataSourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: ddv1alpha1.DataSourceClaimSpec{
			System: "amoro", DataSourceType: "table", DataSourceName: table,
			Workload:                 ddv1alpha1.WorkloadRef{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: name},
			ResolutionTimeoutSeconds: new(int32(10)), Fallback: ddv1alpha1.DataFallbackAnywhere,
		}}
		if err := kc.Create(ctx, claim); err != nil {
			t.Fatal(err)
		}
		if err := kc.Create(ctx, trainingJob(ns, name, "lake", 1)); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, ctx, 2*time.Minute, "the reader running in member-b", func() (bool, string) {
		r := f.running(t, ctx, ns)
		return r["reader"] == "member-b", fmt.Sprint(r)
	})
	// Karmada's controllers restart (their detector re-applies the
	// policy, whose placement allows both members): the reader stays
	// placed where its data is.
	if err := f.plane.RestartControllers(ctx); err != nil {
		t.Fatal(err)
	}
	// It was held for its data, saying so, before the timeout let it go.
	cs := kubernetes.NewForConfigOrDie(f.cluster.RESTConfig())
	poll.Eventually(t, ctx, time.Minute, "the outage's job told it waits for its data", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=outage,reason=DataNotResolved"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		// Before its claim reaches the dispatcher's cache, the job may first
		// be told it waits to see the claim: a separate event.
		var seen []string
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, `waits for the location of amoro table "lake.down"`) {
				return true, ""
			}
			seen = append(seen, ev.Message)
		}
		return false, strings.Join(seen, "; ")
	})
	poll.Eventually(t, ctx, 2*time.Minute, "the outage's job running after its timeout", func() (bool, string) {
		r := f.running(t, ctx, ns)
		return r["outage"] != "", fmt.Sprint(r)
	})
	if r := f.running(t, ctx, ns); r["reader"] != "member-b" {
		t.Errorf("after Karmada's controllers restarted, the reader runs in %q, want member-b where its data is", r["reader"])
	}
	var rb workv1alpha2.ResourceBinding
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reader-job"}, &rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name != "member-b" {
		t.Errorf("the reader's binding is placed in %v, want member-b", rb.Spec.Clusters)
	}
}
