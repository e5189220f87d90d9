package numatopo

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// twoSockets is the sysfs of a node with two sockets, each one NUMA node
// of two cores with two threads: CPUs 0-3 on node 0 (cores 0 and 1, with
// siblings 0/2 and 1/3), 4-7 on node 1.
func twoSockets() fstest.MapFS {
	sys := fstest.MapFS{
		"devices/system/cpu/online":         {Data: []byte("0-7\n")},
		"devices/system/node/online":        {Data: []byte("0-1\n")},
		"devices/system/node/node0/cpulist": {Data: []byte("0-3\n")},
		"devices/system/node/node1/cpulist": {Data: []byte("4-7\n")},
	}
	for id := range 8 {
		dir := "devices/system/cpu/cpu" + string(rune('0'+id)) + "/topology/"
		sys[dir+"physical_package_id"] = &fstest.MapFile{Data: []byte(string(rune('0'+id/4)) + "\n")}
		sys[dir+"core_id"] = &fstest.MapFile{Data: []byte(string(rune('0'+id%2)) + "\n")}
	}
	return sys
}

const staticKubelet = `
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
topologyManagerPolicy: single-numa-node
kubeReserved:
  cpu: 500m
systemReserved:
  cpu: 500m
`

// One pod pinned to CPUs 1 and 3 (a core of node 0); the rest shared.
const pinned = `{"policyName":"static","defaultCpuSet":"0,2,4-7","entries":{"pod-a":{"main":"1,3"}},"checksum":1}`

func TestSpec(t *testing.T) {
	spec, err := Spec(Sources{Sys: twoSockets(), KubeletConfig: []byte(staticKubelet), CPUManagerState: []byte(pinned)})
	if err != nil {
		t.Fatal(err)
	}
	want := nodeinfov1alpha1.NumatopoSpec{
		Policies: map[nodeinfov1alpha1.PolicyName]string{
			nodeinfov1alpha1.CPUManagerPolicy: "static", nodeinfov1alpha1.TopologyManagerPolicy: "single-numa-node",
		},
		ResReserved: map[string]string{"cpu": "1"},
		NumaResMap:  map[string]nodeinfov1alpha1.ResourceInfo{"cpu": {Allocatable: "0,2,4-7", Capacity: 8}},
		CPUDetail: map[string]nodeinfov1alpha1.CPUInfo{
			"0": {NUMANodeID: 0, SocketID: 0, CoreID: 0}, "1": {NUMANodeID: 0, SocketID: 0, CoreID: 1},
			"2": {NUMANodeID: 0, SocketID: 0, CoreID: 0}, "3": {NUMANodeID: 0, SocketID: 0, CoreID: 1},
			"4": {NUMANodeID: 1, SocketID: 1, CoreID: 0}, "5": {NUMANodeID: 1, SocketID: 1, CoreID: 1},
			"6": {NUMANodeID: 1, SocketID: 1, CoreID: 0}, "7": {NUMANodeID: 1, SocketID: 1, CoreID: 1},
		},
		PodAllocations: []nodeinfov1alpha1.PodAllocation{{UID: "pod-a", ContainerAllocations: []nodeinfov1alpha1.ContainerAllocation{
			{Name: "main", Allocations: map[string]string{"cpu": "1,3"}}}}},
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Fatalf("spec (-want,+got):\n%s", diff)
	}

	// The scheduler reads the report as published: one CPU is reserved
	// (taken from node 0's free pair), so a 4-CPU single-NUMA pod fits
	// node 1 only, and a 2-CPU one fits whole on one node.
	r, err := numa.FromNumatopology(&nodeinfov1alpha1.Numatopology{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: spec})
	if err != nil {
		t.Fatalf("the scheduler does not read the report: %v", err)
	}
	if a, reason := numa.Admit(&r.Node, numa.SingleNUMANode, []int64{4}); reason != "" || a.CPUs.String() != "4-7" {
		t.Errorf("4 CPUs: %v %q, want 4-7", a.CPUs, reason)
	}
	if _, reason := numa.Admit(&r.Node, numa.SingleNUMANode, []int64{5}); reason == "" {
		t.Errorf("5 CPUs admitted on nodes of 4")
	}
	if r, ok := r.Reported("pod-a", "", ""); !ok || r.String() != "1,3" {
		t.Errorf("pod-a reported with %v, %v", r, ok)
	}
}

func TestSpecDefaults(t *testing.T) {
	// No kubelet configuration, no checkpoint, a kernel without NUMA
	// nodes: the kubelet's defaults, every CPU shared, all on node 0.
	sys := twoSockets()
	for k := range sys {
		if strings.HasPrefix(k, "devices/system/node") {
			delete(sys, k)
		}
	}
	spec, err := Spec(Sources{Sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Policies[nodeinfov1alpha1.CPUManagerPolicy] != "none" || spec.Policies[nodeinfov1alpha1.TopologyManagerPolicy] != "none" ||
		spec.ResReserved != nil || spec.NumaResMap["cpu"] != (nodeinfov1alpha1.ResourceInfo{Allocatable: "0-7", Capacity: 8}) ||
		spec.CPUDetail["7"] != (nodeinfov1alpha1.CPUInfo{NUMANodeID: 0, SocketID: 1, CoreID: 1}) || spec.PodAllocations != nil {
		t.Errorf("defaults: %+v", spec)
	}
	// reservedSystemCPUs counts over the reserved quantities.
	spec, err = Spec(Sources{Sys: twoSockets(), KubeletConfig: []byte("reservedSystemCPUs: 0,4\nkubeReserved: {cpu: '3'}\n")})
	if err != nil || spec.ResReserved["cpu"] != "2" {
		t.Errorf("reservedSystemCPUs: %v, %v; want 2 reserved", spec.ResReserved, err)
	}
}

func TestSpecErrors(t *testing.T) {
	broken := twoSockets()
	broken["devices/system/cpu/cpu5/topology/core_id"] = &fstest.MapFile{Data: []byte("x\n")}
	for _, tc := range []struct {
		name string
		src  Sources
		want string
	}{
		{"no cpu list", Sources{Sys: fstest.MapFS{}}, "reading /sys/devices/system/cpu/online"},
		{"bad core", Sources{Sys: broken}, `/sys/devices/system/cpu/cpu5/topology/core_id: "x" is not a number`},
		{"bad kubelet", Sources{Sys: twoSockets(), KubeletConfig: []byte("kubeReserved: {cpu: lots}")}, `kubeReserved.cpu "lots"`},
		{"bad default set", Sources{Sys: twoSockets(), CPUManagerState: []byte(`{"policyName":"static","defaultCpuSet":"0-9"}`)}, "not online"},
		{"bad entry", Sources{Sys: twoSockets(), CPUManagerState: []byte(`{"policyName":"static","defaultCpuSet":"0-5","entries":{"p":{"c":"x"}}}`)}, "entries[p][c]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Spec(tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
