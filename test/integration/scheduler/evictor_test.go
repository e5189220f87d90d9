//go:build integration

package scheduler

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/evictor"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestEvictorHonoursDisruptionBudgets: the evictor removes victims through
// the Eviction API, so a PodDisruptionBudget that allows one disruption
// lets one of its pods go and refuses the next; a pod without a budget goes.
func TestEvictorHonoursDisruptionBudgets(t *testing.T) {
	const ns = "evict"
	createNamespace(t, ns)
	labelledNodes(t, ns, 1, "8")
	kcm, err := controlplane.StartKubeControllerManager(t.Context(), fw.Cluster.APIServer, controlplane.KubeControllerManagerOptions{
		BinDir: fw.BinDir, Dir: filepath.Join(fw.Dir, "kcm-evict"), Controllers: []string{"disruption"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := kcm.Stop(); err != nil {
			t.Error(err)
		}
	}()
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"guarded-0", "guarded-1", "free"} {
		app := "guarded"
		if name == "free" {
			app = "free"
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}},
			Spec:       podSpec(ns, "1"),
		}
		p.Spec.NodeName = ns + "-0"
		if err := fw.Client.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		pods[name] = p
	}
	min := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guard"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}
	if err := fw.Client.Create(t.Context(), pdb); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "the budget allows one disruption", func() (bool, string) {
		var got policyv1.PodDisruptionBudget
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pdb), &got); err != nil {
			return false, err.Error()
		}
		return got.Status.DisruptionsAllowed == 1, fmt.Sprintf("%+v", got.Status)
	})

	cs, err := kubernetes.NewForConfig(fw.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	results := map[string]error{}
	ev := evictor.New(evictor.KubeEvictor{Client: cs}, evictor.Options{Concurrency: 1, OnResult: func(r evictor.Result) {
		mu.Lock()
		results[r.Task.Name] = r.Err
		mu.Unlock()
	}})
	go ev.Run(t.Context())
	// One at a time, so that which guarded pod is refused is known.
	for _, name := range []string{"free", "guarded-0", "guarded-1"} {
		ev.Evict(api.NewTaskInfo(pods[name], api.NewJobID(ns, name)), "test")
		ev.Wait()
	}
	if results["free"] != nil || results["guarded-0"] != nil {
		t.Errorf("evicting free and guarded-0: %v, %v; want both evicted", results["free"], results["guarded-0"])
	}
	if !errors.Is(results["guarded-1"], evictor.ErrDisruptionBudget) {
		t.Errorf("evicting guarded-1: %v, want refused by the budget", results["guarded-1"])
	}
	for name, gone := range map[string]bool{"free": true, "guarded-0": true, "guarded-1": false} {
		poll.Eventually(t, t.Context(), 30*time.Second, name+" as expected", func() (bool, string) {
			var p corev1.Pod
			err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &p)
			return apierrors.IsNotFound(err) == gone, fmt.Sprint(err)
		})
	}
}
