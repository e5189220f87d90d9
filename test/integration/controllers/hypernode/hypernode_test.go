//go:build integration

// Package hypernode tests the HyperNode controller against a real API
// server: discovery from node labels, and the status it keeps.
package hypernode

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/hypernode"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

const discovery = `networkTopologyDiscovery:
- source: label
  enabled: true
  interval: 1m
  config:
    networkTopologyTypes:
      fabric:
      - nodeLabel: example.com/spine
      - nodeLabel: example.com/leaf
      - nodeLabel: kubernetes.io/hostname
`

// startController runs the HyperNode controller, as
// caldera-controller-manager runs it, until the test ends.
func startController(t *testing.T, conf string) {
	t.Helper()
	cfg, err := hypernode.LoadConfig([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(fw.RESTConfig(), ctrl.Options{
		Scheme:                 fw.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := hypernode.NewReconciler(mgr.GetClient(), cfg, clock.RealClock{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller manager did not stop")
		}
	})
}

func labelled(name, spine, leaf string) controlplane.NodeSpec {
	return controlplane.NodeSpec{Name: name, Labels: map[string]string{"example.com/spine": spine, "example.com/leaf": leaf}}
}

// tree describes the HyperNodes: name (node count): members.
func tree(t *testing.T) []string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := fw.Client.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, hn := range list.Items {
		var members []string
		for _, m := range hn.Spec.Members {
			members = append(members, m.Selector.ExactMatch.Name)
		}
		out = append(out, fmt.Sprintf("%s (%d): %s", hn.Name, hn.Status.NodeCount, strings.Join(members, ",")))
	}
	slices.Sort(out)
	return out
}

func expectTree(t *testing.T, what string, want []string) {
	t.Helper()
	poll.Eventually(t, t.Context(), 30*time.Second, what, func() (bool, string) {
		got := tree(t)
		return cmp.Equal(want, got), cmp.Diff(want, got)
	})
}

// TestDiscoveryFollowsNodeLabels: HyperNodes are created from node labels,
// follow nodes being added, relabelled and deleted, lose members whose
// nodes went and go when empty, and show their node counts.
func TestDiscoveryFollowsNodeLabels(t *testing.T) {
	startController(t, discovery)
	ctx := t.Context()
	if err := controlplane.CreateNodes(ctx, fw.Client, []controlplane.NodeSpec{
		labelled("n0", "s1", "l1"), labelled("n1", "s1", "l1"), labelled("n2", "s1", "l2"), labelled("n3", "s1", "l2"),
	}); err != nil {
		t.Fatal(err)
	}
	expectTree(t, "the first HyperNodes", []string{
		"fabric-t1-l1 (2): n0,n1",
		"fabric-t1-l2 (2): n2,n3",
		"fabric-t2-s1 (4): fabric-t1-l1,fabric-t1-l2",
	})

	if err := controlplane.CreateNodes(ctx, fw.Client, []controlplane.NodeSpec{labelled("n4", "s2", "l3")}); err != nil {
		t.Fatal(err)
	}
	expectTree(t, "a node added under a new spine", []string{
		"fabric-t1-l1 (2): n0,n1",
		"fabric-t1-l2 (2): n2,n3",
		"fabric-t1-l3 (1): n4",
		"fabric-t2-s1 (4): fabric-t1-l1,fabric-t1-l2",
		"fabric-t2-s2 (1): fabric-t1-l3",
	})

	var n3 corev1.Node
	if err := fw.Client.Get(ctx, client.ObjectKey{Name: "n3"}, &n3); err != nil {
		t.Fatal(err)
	}
	n3.Labels["example.com/spine"], n3.Labels["example.com/leaf"] = "s2", "l3"
	if err := fw.Client.Update(ctx, &n3); err != nil {
		t.Fatal(err)
	}
	expectTree(t, "a node moved to another leaf and spine", []string{
		"fabric-t1-l1 (2): n0,n1",
		"fabric-t1-l2 (1): n2",
		"fabric-t1-l3 (2): n3,n4",
		"fabric-t2-s1 (3): fabric-t1-l1,fabric-t1-l2",
		"fabric-t2-s2 (2): fabric-t1-l3",
	})

	if err := fw.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}); err != nil {
		t.Fatal(err)
	}
	expectTree(t, "a leaf whose last node went, gone with its member in the spine", []string{
		"fabric-t1-l1 (2): n0,n1",
		"fabric-t1-l3 (2): n3,n4",
		"fabric-t2-s1 (2): fabric-t1-l1",
		"fabric-t2-s2 (2): fabric-t1-l3",
	})

	// A HyperNode of the user's is left alone and gets its status; one
	// that puts a discovered leaf under a second parent is marked invalid.
	user := &topologyv1alpha1.HyperNode{
		ObjectMeta: metav1.ObjectMeta{Name: "z-user"},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: 2, Members: []topologyv1alpha1.MemberSpec{{
			Type:     topologyv1alpha1.MemberTypeHyperNode,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "fabric-t1-l1"}},
		}}},
	}
	if err := fw.Client.Create(ctx, user); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the leaf under two parents marked invalid", func() (bool, string) {
		var leaf topologyv1alpha1.HyperNode
		if err := fw.Client.Get(ctx, client.ObjectKey{Name: "fabric-t1-l1"}, &leaf); err != nil {
			return false, err.Error()
		}
		for _, c := range leaf.Status.Conditions {
			if c.Type == hypernode.ValidCondition && c.Status == metav1.ConditionFalse && c.Reason == "MultipleParents" &&
				strings.Contains(c.Message, "kept under fabric-t2-s1") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", leaf.Status.Conditions)
	})
	// kubectl shows the condition's status, and its reason with -o wide.
	poll.Eventually(t, t.Context(), 30*time.Second, "kubectl get hypernodes shows validity", func() (bool, string) {
		out, errOut, err := fw.Kubectl(ctx, "get", "hypernodes", "-o", "wide")
		if err != nil {
			return false, err.Error() + ": " + errOut
		}
		rows := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 6 {
				rows[f[0]] = strings.Join(f[3:6], " ")
			}
		}
		want := map[string]string{"NAME": "NODECOUNT VALID REASON", "fabric-t1-l1": "2 False MultipleParents", "fabric-t2-s1": "2 True TreeConsistent"}
		for name, cols := range want {
			if rows[name] != cols {
				return false, out
			}
		}
		return true, ""
	})
	var got topologyv1alpha1.HyperNode
	if err := fw.Client.Get(ctx, client.ObjectKey{Name: "z-user"}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Members) != 1 || got.Labels[hypernode.DiscoveredByLabel] != "" {
		t.Errorf("the user's HyperNode was changed: %+v", got.Spec)
	}
}
