package numa

import (
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/cpuset"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
)

// Report is a node's Numatopology read into a Node, with the pods whose
// CPUs the node has reported.
type Report struct {
	Node
	// reported holds the CPUs of the pods the node lists in
	// podAllocations, by UID and by namespace/name: they are out of
	// Node.Free.
	reported map[string]cpuset.CPUSet
}

// Reported returns the CPUs the node reports the pod with this UID, or
// namespace and name, to hold, and whether it reports the pod at all: if
// not, a pod bound there may hold CPUs the report shows as free.
func (r *Report) Reported(uid, namespace, name string) (cpuset.CPUSet, bool) {
	if c, ok := r.reported[uid]; ok && uid != "" {
		return c, true
	}
	c, ok := r.reported[namespace+"/"+name]
	return c, ok
}

// FromNumatopology reads a node's Numatopology. Errors name the field.
func FromNumatopology(nt *nodeinfov1alpha1.Numatopology) (*Report, error) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	r := &Report{
		Node: Node{
			CPUs:                  map[int]CPU{},
			Free:                  cpuset.New(),
			CPUManagerPolicy:      nt.Spec.Policies[nodeinfov1alpha1.CPUManagerPolicy],
			TopologyManagerPolicy: Policy(nt.Spec.Policies[nodeinfov1alpha1.TopologyManagerPolicy]),
		},
		reported: map[string]cpuset.CPUSet{},
	}
	for id, c := range nt.Spec.CPUDetail {
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 {
			errs = append(errs, field.Invalid(spec.Child("cpuDetail").Key(id), id, "a CPU id is a number, 0 or more"))
			continue
		}
		r.CPUs[n] = CPU{NUMA: c.NUMANodeID, Socket: c.SocketID, Core: c.CoreID}
	}
	if cpu, ok := nt.Spec.NumaResMap[string(corev1.ResourceCPU)]; ok {
		path := spec.Child("numares").Key("cpu").Child("allocatable")
		free, err := cpuset.Parse(cpu.Allocatable)
		if err != nil {
			errs = append(errs, field.Invalid(path, cpu.Allocatable, fmt.Sprintf("not a CPU list: %v", err)))
		} else {
			for _, id := range free.List() {
				if _, ok := r.CPUs[id]; !ok {
					errs = append(errs, field.Invalid(path, cpu.Allocatable, fmt.Sprintf("CPU %d has no spec.cpuDetail entry", id)))
					break
				}
			}
			r.Free = free
		}
	}
	if v, ok := nt.Spec.ResReserved[string(corev1.ResourceCPU)]; ok {
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			errs = append(errs, field.Invalid(spec.Child("resReserved").Key("cpu"), v, "a CPU quantity, 0 or more"))
		} else {
			r.Reserved = int(math.Ceil(float64(q.MilliValue()) / 1000))
		}
	}
	if p := r.TopologyManagerPolicy; p != "" && !p.Valid() {
		errs = append(errs, field.NotSupported(spec.Child("policies").Key(string(nodeinfov1alpha1.TopologyManagerPolicy)), string(p),
			[]string{string(None), string(BestEffort), string(Restricted), string(SingleNUMANode)}))
	}
	for i, a := range nt.Spec.PodAllocations {
		held := cpuset.New()
		for j, c := range a.ContainerAllocations {
			v, ok := c.Allocations[string(corev1.ResourceCPU)]
			if !ok {
				continue
			}
			cpus, err := cpuset.Parse(v)
			if err != nil {
				path := spec.Child("podAllocations").Index(i).Child("containerAllocations").Index(j).Child("allocations").Key("cpu")
				errs = append(errs, field.Invalid(path, v, fmt.Sprintf("not a CPU list: %v", err)))
				continue
			}
			held = held.Union(cpus)
		}
		if a.UID != "" {
			r.reported[string(a.UID)] = held
		}
		if a.Name != "" {
			r.reported[a.Namespace+"/"+a.Name] = held
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	// Made now: a report is shared, read-only, by every cycle.
	r.topology()
	return r, nil
}
