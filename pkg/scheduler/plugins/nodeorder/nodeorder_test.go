package nodeorder

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestNew: the plugin takes NodeOrderArgs, validated, and needs the pod
// evaluator.
func TestNew(t *testing.T) {
	fit := &framework.Handle{PodFit: evaluatortest.NewEvaluator(t)}
	negative := int32(-1)
	for name, tc := range map[string]struct {
		args    any
		h       *framework.Handle
		wantErr string
	}{
		"no arguments":    {h: fit},
		"weights":         {args: &configv1alpha1.NodeOrderArgs{}, h: fit},
		"negative weight": {args: &configv1alpha1.NodeOrderArgs{LeastRequestedWeight: &negative}, h: fit, wantErr: "leastRequestedWeight"},
		"other arguments": {args: &configv1alpha1.BinpackArgs{}, h: fit, wantErr: "want *NodeOrderArgs"},
		"no evaluator":    {h: &framework.Handle{}, wantErr: "needs the pod evaluator"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.args, tc.h)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestScoresAreKubeSchedulers: ScoreNodes adds kube-scheduler's totals to
// the scores it is given; the kept scores add the same, and follow a node
// that changed once it is updated; a pod that fits no node adds nothing.
func TestScoresAreKubeSchedulers(t *testing.T) {
	snap := api.Build(api.Objects{
		NewNodeMirror: podfit.NewNodeMirror,
		Nodes: []*corev1.Node{
			st.MakeNode("busy").Alloc("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
			st.MakeNode("idle").Alloc("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		},
		Pods: []*corev1.Pod{st.MakePod("ns", "running").Req("cpu", "6", "memory", "12Gi").Node("busy").Phase(corev1.PodRunning).Obj()},
	})
	fit := evaluatortest.NewEvaluator(t)
	p, err := New(nil, &framework.Handle{PodFit: fit})
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*Plugin)
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}, framework.Options{})
	defer ssn.Close()
	nodes := snap.NodeList
	task := api.NewTaskInfo(st.MakePod("ns", "new").Req("cpu", "1", "memory", "1Gi").Obj(), "ns/j")

	s, st0 := fit.PreFilter(t.Context(), task.Pod, nil)
	if st0 != nil {
		t.Fatal(st0)
	}
	want, err := fit.Score(t.Context(), s, nodes)
	if err != nil {
		t.Fatal(err)
	}
	scores := []float64{10, 20}
	pl.ScoreNodes(task, nodes, scores)
	if diff := cmp.Diff([]float64{10 + float64(want[0]), 20 + float64(want[1])}, scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if want[1] <= want[0] {
		t.Errorf("kube-scheduler's totals %v: want the idle node above the busy one (least allocated)", want)
	}

	kept, err := pl.KeepScores(task, nodes)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(nodes))
	if err := kept.AddTo(got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{float64(want[0]), float64(want[1])}, got); diff != "" {
		t.Errorf("kept scores (-want +got):\n%s", diff)
	}
	// Fill the idle node: once updated, its kept score falls.
	filler := api.NewTaskInfo(st.MakePod("ns", "filler").Req("cpu", "7", "memory", "14Gi").Node("idle").Phase(corev1.PodRunning).Obj(), "ns/other")
	nodes[1].AddTask(filler)
	if err := kept.Update(1, nodes[1]); err != nil {
		t.Fatal(err)
	}
	after := make([]float64, len(nodes))
	if err := kept.AddTo(after); err != nil {
		t.Fatal(err)
	}
	if after[1] >= got[1] {
		t.Errorf("idle node's kept score %v after filling it, was %v: want it lower", after[1], got[1])
	}

	// A pod with resource claims fits no node (PreFilter refuses it).
	claims := api.NewTaskInfo(st.MakePod("ns", "claims").Req("cpu", "1").Obj(), "ns/j")
	claims.Pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
	untouched := []float64{1, 2}
	pl.ScoreNodes(claims, nodes, untouched)
	if diff := cmp.Diff([]float64{1, 2}, untouched); diff != "" {
		t.Errorf("a pod that fits no node changed the scores (-want +got):\n%s", diff)
	}
	if _, err := pl.KeepScores(claims, nodes); err == nil {
		t.Error("KeepScores for a pod that fits no node: no error")
	}
}
