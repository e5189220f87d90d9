package numa

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
)

func report(edit func(*nodeinfov1alpha1.NumatopoSpec)) *nodeinfov1alpha1.Numatopology {
	nt := &nodeinfov1alpha1.Numatopology{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: nodeinfov1alpha1.NumatopoSpec{
		Policies: map[nodeinfov1alpha1.PolicyName]string{
			nodeinfov1alpha1.CPUManagerPolicy: "static", nodeinfov1alpha1.TopologyManagerPolicy: "single-numa-node"},
		ResReserved: map[string]string{"cpu": "1500m"},
		NumaResMap:  map[string]nodeinfov1alpha1.ResourceInfo{"cpu": {Allocatable: "0-3", Capacity: 4}},
		CPUDetail: map[string]nodeinfov1alpha1.CPUInfo{
			"0": {}, "1": {CoreID: 0}, "2": {NUMANodeID: 1, SocketID: 1, CoreID: 1}, "3": {NUMANodeID: 1, SocketID: 1, CoreID: 1}},
		PodAllocations: []nodeinfov1alpha1.PodAllocation{
			{UID: "u1", ContainerAllocations: []nodeinfov1alpha1.ContainerAllocation{
				{Name: "a", Allocations: map[string]string{"cpu": "4-5"}}, {Name: "b", Allocations: map[string]string{"cpu": "7", "memory": "1Gi"}}}},
			{Namespace: "ns", Name: "by-name"}},
	}}
	if edit != nil {
		edit(&nt.Spec)
	}
	return nt
}

func TestFromNumatopology(t *testing.T) {
	r, err := FromNumatopology(report(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r.Free.String() != "0-3" || r.Reserved != 2 || len(r.CPUs) != 4 || r.CPUs[2] != (CPU{NUMA: 1, Socket: 1, Core: 1}) ||
		r.CPUManagerPolicy != "static" || r.TopologyManagerPolicy != SingleNUMANode {
		t.Errorf("read %+v", r.Node)
	}
	if held, ok := r.Reported("u1", "ns", "x"); !ok || held.String() != "4-5,7" {
		t.Errorf("u1 holds %v (reported %v), want 4-5,7", held, ok)
	}
	if held, ok := r.Reported("u9", "ns", "by-name"); !ok || !held.IsEmpty() {
		t.Errorf("ns/by-name holds %v (reported %v), want reported with no CPUs", held, ok)
	}
	if _, ok := r.Reported("u2", "ns", "other"); ok {
		t.Errorf("an unlisted pod is reported")
	}

	for _, tc := range []struct {
		name string
		edit func(*nodeinfov1alpha1.NumatopoSpec)
		want string
	}{
		{"CPU id not a number", func(s *nodeinfov1alpha1.NumatopoSpec) { s.CPUDetail["x"] = nodeinfov1alpha1.CPUInfo{} },
			`spec.cpuDetail[x]: Invalid value: "x": a CPU id is a number`},
		{"free CPUs not a list", func(s *nodeinfov1alpha1.NumatopoSpec) {
			s.NumaResMap["cpu"] = nodeinfov1alpha1.ResourceInfo{Allocatable: "0-"}
		}, `spec.numares[cpu].allocatable: Invalid value: "0-": not a CPU list`},
		{"a free CPU without detail", func(s *nodeinfov1alpha1.NumatopoSpec) {
			s.NumaResMap["cpu"] = nodeinfov1alpha1.ResourceInfo{Allocatable: "0-4"}
		}, "CPU 4 has no spec.cpuDetail entry"},
		{"reserved not a quantity", func(s *nodeinfov1alpha1.NumatopoSpec) { s.ResReserved["cpu"] = "two" },
			`spec.resReserved[cpu]: Invalid value: "two"`},
		{"held CPUs not a list", func(s *nodeinfov1alpha1.NumatopoSpec) {
			s.PodAllocations[0].ContainerAllocations[1].Allocations["cpu"] = "seven"
		}, `spec.podAllocations[0].containerAllocations[1].allocations[cpu]: Invalid value: "seven"`},
		{"unknown topology policy", func(s *nodeinfov1alpha1.NumatopoSpec) {
			s.Policies[nodeinfov1alpha1.TopologyManagerPolicy] = "single-numa"
		}, `spec.policies[TopologyManagerPolicy]: Unsupported value: "single-numa"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromNumatopology(report(tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
