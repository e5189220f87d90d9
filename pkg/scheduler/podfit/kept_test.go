package podfit

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestKeptResultsMatchFreshOnes runs cycles over a small cluster that
// changes between them (pods placed and removed, nodes relabelled, tainted
// and cordoned, what nodes lend, images pulled and removed, nodes copied
// as snapshots copy them, a pod with anti-affinity coming and going) and
// checks, for pods of a few kinds made anew each cycle, that every Filter
// verdict equals a fresh run of the filters, that the scores of the nodes
// that passed equal a fresh run of the score plugins, and that kept
// results were used.
func TestKeptResultsMatchFreshOnes(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			e, _ := newTestEvaluator(t)
			var objs []*corev1.Node
			for i := range 12 {
				objs = append(objs, st.MakeNode(fmt.Sprintf("n%02d", i)).Zone([]string{"a", "b", "c"}[i%3]).
					Alloc("cpu", "8", "memory", "16Gi", "pods", "6", "nvidia.com/gpu", "4").Obj())
			}
			nodes := nodeInfos(objs, nil)
			var placed []*api.TaskInfo
			var anti *api.TaskInfo
			shapes := []func(name string) *corev1.Pod{
				func(n string) *corev1.Pod { return st.MakePod(ns, n).Req("cpu", "1", "memory", "1Gi").Obj() },
				func(n string) *corev1.Pod { return st.MakePod(ns, n).Req("cpu", "6", "nvidia.com/gpu", "3").Obj() },
				func(n string) *corev1.Pod {
					return st.MakePod(ns, n).Req("cpu", "1").NodeSelector(corev1.LabelTopologyZone, "a").Obj()
				},
				func(n string) *corev1.Pod {
					return st.MakePod(ns, n).Req("cpu", "1").Toleration("dedicated", "gpu", corev1.TaintEffectNoSchedule).Obj()
				},
				func(n string) *corev1.Pod { return st.MakePod(ns, n).Req("cpu", "1").HostPort(8080).Obj() },
				func(n string) *corev1.Pod { return st.MakePod(ns, n).Label("app", "web").Req("cpu", "1").Obj() },
				func(n string) *corev1.Pod {
					return st.MakePod(ns, n).Req("cpu", "1").PreferredNodeAffinityIn(10, corev1.LabelTopologyZone, "b").Obj()
				},
				func(n string) *corev1.Pod { return st.MakePod(ns, n).Req("cpu", "1").Image("big:1").Obj() },
			}
			var checked, scored int
			for cycle := range 40 {
				// Change the cluster.
				for range rng.IntN(4) {
					i := rng.IntN(len(nodes))
					if rng.IntN(2) == 0 {
						nodes[i] = nodes[i].Clone()
					}
					n := nodes[i]
					switch rng.IntN(8) {
					case 0, 1:
						pod := shapes[rng.IntN(len(shapes))](fmt.Sprintf("placed-%d-%d", cycle, rng.IntN(1000)))
						pod.Spec.NodeName = n.Name
						pod.Status.Phase = corev1.PodRunning
						placed = append(placed, place(n, pod, api.Running))
					case 2:
						if len(placed) > 0 {
							k := rng.IntN(len(placed))
							task := placed[k]
							nodeByName(nodes, task.NodeName).RemoveTask(klog.Background(), task)
							placed = append(placed[:k], placed[k+1:]...)
						}
					case 3:
						node := n.Node.DeepCopy()
						node.Labels[corev1.LabelTopologyZone] = []string{"a", "b", "c"}[rng.IntN(3)]
						n.SetNode(node)
					case 4:
						node := n.Node.DeepCopy()
						if len(node.Spec.Taints) == 0 {
							effect := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule}[rng.IntN(2)]
							node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: effect}}
						} else {
							node.Spec.Taints = nil
						}
						n.SetNode(node)
					case 5:
						node := n.Node.DeepCopy()
						node.Spec.Unschedulable = !node.Spec.Unschedulable
						n.SetNode(node)
					case 6:
						// What a node lends moves (as batch resources do).
						node := n.Node.DeepCopy()
						node.Status.Allocatable["nvidia.com/gpu"] = *resource.NewQuantity(int64(rng.IntN(5)), resource.DecimalSI)
						n.SetNode(node)
					case 7:
						// The image pulled or removed here changes
						// ImageLocality's scores on the other nodes that
						// hold it, whose generations do not move.
						node := n.Node.DeepCopy()
						if len(node.Status.Images) == 0 {
							node.Status.Images = []corev1.ContainerImage{{Names: []string{"big:1"}, SizeBytes: 800 << 20}}
						} else {
							node.Status.Images = nil
						}
						n.SetNode(node)
					}
				}
				if rng.IntN(5) == 0 {
					if anti == nil {
						n := nodes[rng.IntN(len(nodes))]
						pod := st.MakePod(ns, fmt.Sprintf("anti-%d", cycle)).PodAntiAffinity(corev1.LabelTopologyZone, "app", "web").
							Node(n.Name).Phase(corev1.PodRunning).Obj()
						anti = place(n, pod, api.Running)
					} else {
						nodeByName(nodes, anti.NodeName).RemoveTask(klog.Background(), anti)
						anti = nil
					}
				}
				e.SetNodes(nodes)
				// A cycle: pods of every kind, made anew.
				for k, shape := range shapes {
					pod := shape(fmt.Sprintf("p-%d-%d", cycle, k))
					s, status := e.PreFilter(t.Context(), pod, nil)
					if status != nil {
						t.Fatalf("cycle %d, pod kind %d: PreFilter: %v", cycle, k, status)
					}
					var feasible []*api.NodeInfo
					for _, n := range nodes {
						got := e.Filter(t.Context(), s, n)
						want := fromUpstream(e.fw.RunFilterPlugins(t.Context(), s.(*PodState).state, pod, nodeInfoOf(n)))
						if diff := cmp.Diff(want, got); diff != "" {
							t.Fatalf("cycle %d, pod kind %d, node %s (-fresh,+kept):\n%s", cycle, k, n.Name, diff)
						}
						if got == nil {
							feasible = append(feasible, n)
						}
						checked++
					}
					if len(feasible) == 0 {
						continue
					}
					got, err := e.Score(t.Context(), s, feasible)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(freshScores(t, e, s, feasible), got); diff != "" {
						t.Fatalf("cycle %d, pod kind %d: scores (-fresh,+kept):\n%s", cycle, k, diff)
					}
					scored += len(feasible)
				}
			}
			filters, scores := e.KeptHits()
			if filters < checked/20 {
				t.Errorf("%d of %d verdicts were kept ones; want at least one in twenty", filters, checked)
			}
			if scores < scored/20 {
				t.Errorf("%d of %d nodes' scores were kept ones; want at least one in twenty", scores, scored)
			}
		})
	}
}

// freshScores scores the nodes with the framework's own RunScorePlugins.
func freshScores(t *testing.T, e *Evaluator, fs framework.PodFitState, nodes []*api.NodeInfo) []int64 {
	t.Helper()
	s := fs.(*PodState)
	infos := make([]fwk.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = nodeInfoOf(n)
	}
	state := s.state.Clone()
	if st := e.fw.RunPreScorePlugins(t.Context(), state, s.pod, infos); !st.IsSuccess() {
		t.Fatal(st.AsError())
	}
	scores, st := e.fw.RunScorePlugins(t.Context(), state, s.pod, infos)
	if !st.IsSuccess() {
		t.Fatal(st.AsError())
	}
	out := make([]int64, len(scores))
	for i := range scores {
		out[i] = scores[i].TotalScore
	}
	return out
}

// TestWhichPodsKeepFilterVerdicts: pods mounting claims, ephemeral or
// CSI volumes, and every pod while a placed pod has affinity terms, are
// judged afresh each time.
func TestWhichPodsKeepFilterVerdicts(t *testing.T) {
	e, _ := newTestEvaluator(t)
	nodes := nodeInfos([]*corev1.Node{st.MakeNode("n").Alloc("cpu", "4", "memory", "4Gi", "pods", "10").Obj()}, nil)
	e.SetNodes(nodes)
	plain := st.MakePod(ns, "plain").Req("cpu", "1").Obj()
	withVolume := func(v corev1.VolumeSource) *corev1.Pod {
		p := plain.DeepCopy()
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: v}}
		return p
	}
	cases := map[string]struct {
		pod  *corev1.Pod
		keep bool
	}{
		"plain":        {plain, true},
		"config map":   {withVolume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}), true},
		"empty dir":    {withVolume(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), true},
		"claim":        {withVolume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}), false},
		"ephemeral":    {withVolume(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}), false},
		"csi":          {withVolume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}), false},
		"own affinity": {st.MakePod(ns, "aff").Req("cpu", "1").PodAntiAffinity(hostKey, "app", "a").Obj(), false},
	}
	for name, tc := range cases {
		if got := e.keptFor(t.Context(), &PodState{pod: tc.pod}) != nil; got != tc.keep {
			t.Errorf("%s: kept = %v, want %v", name, got, tc.keep)
		}
	}
	// A pod with anti-affinity placed in the cycle, then found in the
	// next cycle's nodes.
	anti := st.MakePod(ns, "anti").PodAntiAffinity(hostKey, "app", "a").Node("n").Phase(corev1.PodRunning).Obj()
	place(nodes[0], anti, api.Running)
	e.NotePlaced(anti)
	if e.keptFor(t.Context(), &PodState{pod: plain}) != nil {
		t.Error("plain pod after a pod with anti-affinity was placed: verdicts kept, want judged afresh")
	}
	e.SetNodes(nodes)
	if e.keptFor(t.Context(), &PodState{pod: plain}) != nil {
		t.Error("plain pod beside a placed pod with anti-affinity: verdicts kept, want judged afresh")
	}
}

// TestNoVerdictIsKeptOnceAPodWithAffinityIsPlaced: a pod with
// anti-affinity placed in the cycle changes verdicts on the other nodes of
// its zone, whose generations do not move; a pod signed before that
// placement (its signature cached for the cycle) must be judged afresh.
func TestNoVerdictIsKeptOnceAPodWithAffinityIsPlaced(t *testing.T) {
	e, _ := newTestEvaluator(t)
	nodes := nodeInfos([]*corev1.Node{
		st.MakeNode("a").Zone("z").Alloc("cpu", "4", "memory", "4Gi", "pods", "10").Obj(),
		st.MakeNode("b").Zone("z").Alloc("cpu", "4", "memory", "4Gi", "pods", "10").Obj(),
	}, nil)
	e.SetNodes(nodes)
	// The signature the cycle cached before the placement below.
	sig, ok := e.Signature(t.Context(), st.MakePod(ns, "web").Label("app", "web").Req("cpu", "1").Obj())
	web := func(name string) framework.PodFitState {
		s, status := e.PreFilter(t.Context(), st.MakePod(ns, name).Label("app", "web").Req("cpu", "1").Obj(), func() (string, bool) { return sig, ok })
		if status != nil {
			t.Fatal(status)
		}
		return s
	}
	if st := e.Filter(t.Context(), web("web-0"), nodes[1]); st != nil {
		t.Fatalf("web-0 on b: %v, want it to fit", st)
	}
	anti := st.MakePod(ns, "anti").PodAntiAffinity(corev1.LabelTopologyZone, "app", "web").Node("a").Phase(corev1.PodRunning).Obj()
	place(nodes[0], anti, api.Running)
	e.NotePlaced(anti)
	if st := e.Filter(t.Context(), web("web-1"), nodes[1]); st == nil {
		t.Fatal("web-1 on b fits, want it refused: b is in the zone of a pod that avoids app=web")
	}
}

// TestSignatureCarriesLabelsOnlyBesideAffinityPods: pods differing only in
// labels sign alike until a pod with affinity terms is placed, whose terms
// may select one and not the other.
func TestSignatureCarriesLabelsOnlyBesideAffinityPods(t *testing.T) {
	e, _ := newTestEvaluator(t)
	nodes := nodeInfos([]*corev1.Node{st.MakeNode("a").Alloc("cpu", "4", "memory", "4Gi", "pods", "10").Obj()}, nil)
	e.SetNodes(nodes)
	sign := func(app string) string {
		sig, ok := e.Signature(t.Context(), st.MakePod(ns, "p-"+app).Label("app", app).Req("cpu", "1").Obj())
		if !ok {
			t.Fatalf("pod with app=%s not signed", app)
		}
		return sig
	}
	if sign("web") != sign("db") {
		t.Error("no pod with affinity placed: pods differing only in labels sign differently, want alike")
	}
	anti := st.MakePod(ns, "anti").PodAntiAffinity(hostKey, "app", "web").Node("a").Phase(corev1.PodRunning).Obj()
	place(nodes[0], anti, api.Running)
	e.NotePlaced(anti)
	if sign("web") == sign("db") {
		t.Error("pod with anti-affinity placed in the cycle: pods differing only in labels sign alike, want apart")
	}
	e.SetNodes(nodes)
	if sign("web") == sign("db") {
		t.Error("pod with anti-affinity on the nodes: pods differing only in labels sign alike, want apart")
	}
}

// TestSameSignersSignAlike: a plugin left out of signing because another
// gives its fragment (sameSignerAs) must sign every pod exactly as that
// one does, with the same status.
func TestSameSignersSignAlike(t *testing.T) {
	e, _ := newTestEvaluator(t)
	if len(e.sameSigners) == 0 {
		t.Fatal("no signer left out: want BalancedAllocation, signed alike by Fit")
	}
	always := corev1.ContainerRestartPolicyAlways
	sidecar := st.MakePod(ns, "sidecar").Req("cpu", "1").InitReq("cpu", "2", "memory", "1Gi").Obj()
	sidecar.Spec.InitContainers[0].RestartPolicy = &always
	overhead := st.MakePod(ns, "overhead").Req("cpu", "1").Obj()
	overhead.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	podLevel := st.MakePod(ns, "pod-level").Req("cpu", "1").Obj()
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("2Gi")}}
	two := st.MakePod(ns, "two").Req("cpu", "1").Container("b").Obj()
	two.Spec.Containers[1].Resources.Requests = corev1.ResourceList{
		corev1.ResourceMemory: resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("4Mi")}
	pods := []*corev1.Pod{
		st.MakePod(ns, "none").Obj(),
		st.MakePod(ns, "cpu").Req("cpu", "1").Obj(),
		st.MakePod(ns, "cpu-memory").Req("cpu", "500m", "memory", "1Gi").Obj(),
		st.MakePod(ns, "gpu").Req("cpu", "8", "memory", "64Gi", "nvidia.com/gpu", "8").Obj(),
		st.MakePod(ns, "init").Req("cpu", "1").InitReq("cpu", "4").Obj(),
		two, sidecar, overhead, podLevel,
	}
	for _, same := range e.sameSigners {
		var other fwk.SignPlugin
		for _, p := range e.signers {
			if p.Name() == sameSignerAs[same.Name()] {
				other = p
			}
		}
		if other == nil {
			t.Fatalf("%s left out, but %s does not sign", same.Name(), sameSignerAs[same.Name()])
		}
		for _, pod := range pods {
			got, gotSt := same.SignPod(t.Context(), pod)
			want, wantSt := other.SignPod(t.Context(), pod)
			if gotSt.Code() != wantSt.Code() || !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("pod %s: %s signs %+v (%v), %s signs %+v (%v)", pod.Name, same.Name(), got, gotSt, other.Name(), want, wantSt)
			}
		}
	}
}
