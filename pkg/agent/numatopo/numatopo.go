// Package numatopo makes a node's Numatopology (nodeinfo.volcano.sh), the
// report the scheduler's numa-aware plugin places pods by, from what the
// node itself says: the kernel's CPU topology under /sys, the kubelet's
// configuration, and the kubelet's CPU manager checkpoint. It reads and
// decides only; caldera-agent's loop is to publish what it returns.
package numatopo

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/cpuset"
	"sigs.k8s.io/yaml"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
)

// Sources are what a node says about its CPUs.
type Sources struct {
	// Sys is the kernel's sysfs (rooted at /sys): devices/system/cpu and
	// devices/system/node.
	Sys fs.FS
	// KubeletConfig is the kubelet's configuration file
	// (KubeletConfiguration, YAML or JSON); empty: the kubelet's defaults.
	KubeletConfig []byte
	// CPUManagerState is the kubelet's CPU manager checkpoint
	// (/var/lib/kubelet/cpu_manager_state); empty: no CPU is pinned.
	CPUManagerState []byte
}

// kubeletConfig is the part of KubeletConfiguration read here.
type kubeletConfig struct {
	CPUManagerPolicy      string            `json:"cpuManagerPolicy"`
	TopologyManagerPolicy string            `json:"topologyManagerPolicy"`
	ReservedSystemCPUs    string            `json:"reservedSystemCPUs"`
	KubeReserved          map[string]string `json:"kubeReserved"`
	SystemReserved        map[string]string `json:"systemReserved"`
}

// cpuManagerState is the kubelet's CPU manager checkpoint.
type cpuManagerState struct {
	PolicyName    string                       `json:"policyName"`
	DefaultCPUSet string                       `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries"`
}

// Spec returns the node's Numatopology spec. Errors name the source and
// what in it does not read.
func Spec(src Sources) (nodeinfov1alpha1.NumatopoSpec, error) {
	var spec nodeinfov1alpha1.NumatopoSpec
	cpus, err := readCPUs(src.Sys)
	if err != nil {
		return spec, err
	}
	var kc kubeletConfig
	if len(src.KubeletConfig) > 0 {
		if err := yaml.Unmarshal(src.KubeletConfig, &kc); err != nil {
			return spec, fmt.Errorf("kubelet configuration: %w", err)
		}
	}
	cpuPolicy, topoPolicy := orDefault(kc.CPUManagerPolicy, "none"), orDefault(kc.TopologyManagerPolicy, "none")
	spec.Policies = map[nodeinfov1alpha1.PolicyName]string{
		nodeinfov1alpha1.CPUManagerPolicy:      cpuPolicy,
		nodeinfov1alpha1.TopologyManagerPolicy: topoPolicy,
	}
	reserved, err := reservedCPUs(kc)
	if err != nil {
		return spec, err
	}
	if reserved > 0 {
		spec.ResReserved = map[string]string{string(corev1.ResourceCPU): strconv.Itoa(reserved)}
	}

	online := cpuset.New(slices.Collect(maps.Keys(cpus))...)
	free := online
	var st cpuManagerState
	if len(src.CPUManagerState) > 0 {
		if err := json.Unmarshal(src.CPUManagerState, &st); err != nil {
			return spec, fmt.Errorf("CPU manager state: %w", err)
		}
	}
	// Under the static policy the shared pool is what no container has
	// pinned; under none every CPU is shared.
	if st.PolicyName == "static" && st.DefaultCPUSet != "" {
		if free, err = cpuset.Parse(st.DefaultCPUSet); err != nil {
			return spec, fmt.Errorf("CPU manager state: defaultCpuSet %q: %w", st.DefaultCPUSet, err)
		}
		if !free.IsSubsetOf(online) {
			return spec, fmt.Errorf("CPU manager state: defaultCpuSet %q names CPUs %s that are not online (%s)",
				st.DefaultCPUSet, free.Difference(online), online)
		}
	}
	spec.NumaResMap = map[string]nodeinfov1alpha1.ResourceInfo{
		string(corev1.ResourceCPU): {Allocatable: free.String(), Capacity: online.Size()},
	}
	spec.CPUDetail = map[string]nodeinfov1alpha1.CPUInfo{}
	for id, c := range cpus {
		spec.CPUDetail[strconv.Itoa(id)] = c
	}
	if st.PolicyName == "static" {
		for _, uid := range slices.Sorted(maps.Keys(st.Entries)) {
			a := nodeinfov1alpha1.PodAllocation{UID: types.UID(uid)}
			for _, name := range slices.Sorted(maps.Keys(st.Entries[uid])) {
				set := st.Entries[uid][name]
				if _, err := cpuset.Parse(set); err != nil {
					return spec, fmt.Errorf("CPU manager state: entries[%s][%s] %q: %w", uid, name, set, err)
				}
				a.ContainerAllocations = append(a.ContainerAllocations, nodeinfov1alpha1.ContainerAllocation{
					Name: name, Allocations: map[string]string{string(corev1.ResourceCPU): set}})
			}
			spec.PodAllocations = append(spec.PodAllocations, a)
		}
	}
	return spec, nil
}

// reservedCPUs is how many CPUs the kubelet keeps for the system: the
// reservedSystemCPUs list, else kube- and system-reserved cpu rounded up.
func reservedCPUs(kc kubeletConfig) (int, error) {
	if kc.ReservedSystemCPUs != "" {
		set, err := cpuset.Parse(kc.ReservedSystemCPUs)
		if err != nil {
			return 0, fmt.Errorf("kubelet configuration: reservedSystemCPUs %q: %w", kc.ReservedSystemCPUs, err)
		}
		return set.Size(), nil
	}
	var milli int64
	for _, r := range []struct {
		name string
		m    map[string]string
	}{{"kubeReserved", kc.KubeReserved}, {"systemReserved", kc.SystemReserved}} {
		v, ok := r.m[string(corev1.ResourceCPU)]
		if !ok {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			return 0, fmt.Errorf("kubelet configuration: %s.cpu %q: a CPU quantity, 0 or more", r.name, v)
		}
		milli += q.MilliValue()
	}
	return int(math.Ceil(float64(milli) / 1000)), nil
}

// readCPUs reads where each online CPU sits: its package and core from
// its topology directory, its NUMA node from the nodes' CPU lists (node 0
// on a kernel without NUMA nodes).
func readCPUs(sys fs.FS) (map[int]nodeinfov1alpha1.CPUInfo, error) {
	online, err := readList(sys, "devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	cpus := map[int]nodeinfov1alpha1.CPUInfo{}
	for _, id := range online.List() {
		dir := fmt.Sprintf("devices/system/cpu/cpu%d/topology/", id)
		socket, err := readInt(sys, dir+"physical_package_id")
		if err != nil {
			return nil, err
		}
		core, err := readInt(sys, dir+"core_id")
		if err != nil {
			return nil, err
		}
		cpus[id] = nodeinfov1alpha1.CPUInfo{SocketID: socket, CoreID: core}
	}
	nodes, err := readList(sys, "devices/system/node/online")
	if err != nil {
		if _, statErr := fs.Stat(sys, "devices/system/node"); statErr != nil {
			return cpus, nil
		}
		return nil, err
	}
	for _, n := range nodes.List() {
		list, err := readList(sys, fmt.Sprintf("devices/system/node/node%d/cpulist", n))
		if err != nil {
			return nil, err
		}
		for _, id := range list.List() {
			if c, ok := cpus[id]; ok {
				c.NUMANodeID = n
				cpus[id] = c
			}
		}
	}
	return cpus, nil
}

func readList(sys fs.FS, path string) (cpuset.CPUSet, error) {
	b, err := fs.ReadFile(sys, path)
	if err != nil {
		return cpuset.CPUSet{}, fmt.Errorf("reading /sys/%s: %w", path, err)
	}
	set, err := cpuset.Parse(strings.TrimSpace(string(b)))
	if err != nil {
		return cpuset.CPUSet{}, fmt.Errorf("/sys/%s: %w", path, err)
	}
	return set, nil
}

func readInt(sys fs.FS, path string) (int, error) {
	b, err := fs.ReadFile(sys, path)
	if err != nil {
		return 0, fmt.Errorf("reading /sys/%s: %w", path, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("/sys/%s: %q is not a number, 0 or more", path, strings.TrimSpace(string(b)))
	}
	return n, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
