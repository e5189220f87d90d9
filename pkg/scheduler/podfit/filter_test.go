package podfit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const (
	ns       = "ns"
	zoneKey  = corev1.LabelTopologyZone
	hostKey  = corev1.LabelHostname
	gpu      = "nvidia.com/gpu"
	gpuTaint = "dedicated"
)

// filterCluster: n1 and n2 in zone a, n3 and n4 in zone b.
//
//	n1: 4 cpu, disk=ssd, runs web (3 cpu, host port 8080)
//	n2: 4 cpu, 2 gpus, tainted dedicated=gpu:NoSchedule
//	n3: 2 cpu, cordoned
//	n4: 8 cpu, runs db (1 cpu) and lonely, which keeps app=x pods away
func filterCluster() ([]*corev1.Node, []*corev1.Pod) {
	nodes := []*corev1.Node{
		st.MakeNode("n1").Zone("a").Label("disk", "ssd").Alloc("cpu", "4", "memory", "8Gi").Obj(),
		st.MakeNode("n2").Zone("a").Alloc("cpu", "4", "memory", "8Gi", gpu, "2").Taint(gpuTaint, "gpu", corev1.TaintEffectNoSchedule).Obj(),
		st.MakeNode("n3").Zone("b").Alloc("cpu", "2", "memory", "4Gi").Unschedulable().Obj(),
		st.MakeNode("n4").Zone("b").Alloc("cpu", "8", "memory", "16Gi").Obj(),
	}
	pods := []*corev1.Pod{
		st.MakePod(ns, "web").Label("app", "web").Req("cpu", "3").HostPort(8080).Node("n1").Phase(corev1.PodRunning).Obj(),
		st.MakePod(ns, "db").Label("app", "db").Req("cpu", "1").Node("n4").Phase(corev1.PodRunning).Obj(),
		st.MakePod(ns, "lonely").PodAntiAffinity(hostKey, "app", "x").Node("n4").Phase(corev1.PodRunning).Obj(),
	}
	return nodes, pods
}

func TestFilter(t *testing.T) {
	unschedulable := "NodeUnschedulable: node(s) were unschedulable"
	untolerated := "TaintToleration: node(s) had untolerated taint(s)"
	cases := map[string]struct {
		pod     *corev1.Pod
		objs    []runtime.Object
		want    []string
		wantWhy map[string]string
	}{
		"plain pod avoids the cordoned and the tainted node": {
			pod:     st.MakePod(ns, "p").Req("cpu", "500m").Obj(),
			want:    []string{"n1", "n4"},
			wantWhy: map[string]string{"n2": untolerated, "n3": unschedulable},
		},
		"toleration admits the tainted node": {
			pod:  st.MakePod(ns, "p").Toleration(gpuTaint, "gpu", corev1.TaintEffectNoSchedule).Obj(),
			want: []string{"n1", "n2", "n4"},
		},
		"node name": {
			pod:     st.MakePod(ns, "p").Node("n4").Obj(),
			want:    []string{"n4"},
			wantWhy: map[string]string{"n1": "NodeName: node(s) didn't satisfy plugin(s) [NodeName]"},
		},
		"required node affinity": {
			pod:     st.MakePod(ns, "p").NodeAffinityIn("disk", "ssd").Obj(),
			want:    []string{"n1"},
			wantWhy: map[string]string{"n4": "NodeAffinity: node(s) didn't match Pod's node affinity/selector"},
		},
		"node selector": {
			pod:  st.MakePod(ns, "p").NodeSelector(zoneKey, "b").Obj(),
			want: []string{"n4"},
		},
		"host port in use": {
			pod:     st.MakePod(ns, "p").HostPort(8080).Obj(),
			want:    []string{"n4"},
			wantWhy: map[string]string{"n1": "NodePorts: node(s) didn't have free ports for the requested pod ports"},
		},
		"cpu does not fit next to web": {
			pod:     st.MakePod(ns, "p").Req("cpu", "2").Obj(),
			want:    []string{"n4"},
			wantWhy: map[string]string{"n1": "NodeResourcesFit: Insufficient cpu"},
		},
		"gpu only on the gpu node": {
			pod:     st.MakePod(ns, "p").Req(gpu, "1").Toleration(gpuTaint, "", corev1.TaintEffectNoSchedule).Obj(),
			want:    []string{"n2"},
			wantWhy: map[string]string{"n1": "NodeResourcesFit: Insufficient nvidia.com/gpu"},
		},
		"pod affinity to web's zone": {
			pod:     st.MakePod(ns, "p").PodAffinity(zoneKey, "app", "web").Toleration(gpuTaint, "", corev1.TaintEffectNoSchedule).Obj(),
			want:    []string{"n1", "n2"},
			wantWhy: map[string]string{"n4": "InterPodAffinity: node(s) didn't match pod affinity rules"},
		},
		"pod anti-affinity to web's host": {
			pod:     st.MakePod(ns, "p").PodAntiAffinity(hostKey, "app", "web").Obj(),
			want:    []string{"n4"},
			wantWhy: map[string]string{"n1": "InterPodAffinity: node(s) didn't match pod anti-affinity rules"},
		},
		"pod anti-affinity to web's zone": {
			pod:  st.MakePod(ns, "p").PodAntiAffinity(zoneKey, "app", "web").Toleration(gpuTaint, "", corev1.TaintEffectNoSchedule).Obj(),
			want: []string{"n4"},
		},
		"a running pod's anti-affinity keeps the pod away": {
			pod:     st.MakePod(ns, "p").Label("app", "x").Obj(),
			want:    []string{"n1"},
			wantWhy: map[string]string{"n4": "InterPodAffinity: node(s) didn't satisfy existing pods anti-affinity rules"},
		},
		"topology spread across zones": {
			pod:     st.MakePod(ns, "p").Label("app", "db").Spread(1, zoneKey, corev1.DoNotSchedule, "app", "db").Obj(),
			want:    []string{"n1"},
			wantWhy: map[string]string{"n4": "PodTopologySpread: node(s) didn't match pod topology spread constraints"},
		},
		"wait-for-first-consumer claim provisioned only in zone b": {
			pod: st.MakePod(ns, "p").PVC("data").Obj(),
			objs: []runtime.Object{
				st.MakeStorageClass("zonal", "example.com/zonal").WaitForFirstConsumer().AllowedTopology(zoneKey, "b").Obj(),
				st.MakePVC(ns, "data").StorageClass("zonal").Obj(),
			},
			want:    []string{"n4"},
			wantWhy: map[string]string{"n1": "VolumeBinding: node(s) didn't find available persistent volumes to bind"},
		},
		"unbound immediate claim fits nowhere": {
			pod: st.MakePod(ns, "p").PVC("data").Obj(),
			objs: []runtime.Object{
				st.MakeStorageClass("now", "example.com/now").Obj(),
				st.MakePVC(ns, "data").StorageClass("now").Obj(),
			},
			wantWhy: map[string]string{"n1": "VolumeBinding: pod has unbound immediate PersistentVolumeClaims"},
		},
		"resource claims are refused without dynamic resource allocation": {
			pod: func() *corev1.Pod {
				p := st.MakePod(ns, "p").Obj()
				p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new("gpu")}}
				return p
			}(),
			wantWhy: map[string]string{"n4": "DynamicResources: pod has resource claims, and the predicates plugin's dynamicResourceAllocation (Volcano's predicate.DynamicResourceAllocationEnable) is off"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := newTestEvaluator(t, tc.objs...)
			e.SetNodes(nodeInfos(filterCluster()))
			got, why := e.Feasible(t.Context(), tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("feasible nodes (-want,+got):\n%s", diff)
			}
			for node, want := range tc.wantWhy {
				if got := why[node].Message(); got != want {
					t.Errorf("why not %s = %q, want %q", node, got, want)
				}
			}
		})
	}
}

func TestStatusCodes(t *testing.T) {
	e, _ := newTestEvaluator(t)
	e.SetNodes(nodeInfos(filterCluster()))
	_, why := e.Feasible(t.Context(), st.MakePod(ns, "p").Req("cpu", "3").NodeAffinityIn(zoneKey, "a").Obj())
	got := map[string]framework.Code{}
	for node, s := range why {
		got[node] = s.Code
	}
	want := map[string]framework.Code{
		"n1": framework.Unschedulable,                // cpu: evicting web would help
		"n2": framework.UnschedulableAndUnresolvable, // taint
		"n3": framework.UnschedulableAndUnresolvable, // cordoned
		"n4": framework.UnschedulableAndUnresolvable, // zone
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes (-want,+got):\n%s", diff)
	}
	if why["n1"].Unresolvable() || !why["n4"].Unresolvable() {
		t.Errorf("Unresolvable: n1 %v, n4 %v; want false, true", why["n1"].Unresolvable(), why["n4"].Unresolvable())
	}
}
