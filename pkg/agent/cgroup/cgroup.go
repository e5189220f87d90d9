// Package cgroup finds pods' and containers' cgroups in a cgroup v2 tree
// laid out by the kubelet (cgroupfs or systemd driver), and reads and
// writes their interface files as the kernel exposes them. The tree's
// root is configurable: /sys/fs/cgroup on a node, a temporary directory in
// tests.
package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Driver is the kubelet's cgroup driver.
type Driver string

// Drivers.
const (
	Cgroupfs Driver = "cgroupfs"
	Systemd  Driver = "systemd"
)

// ParseDriver reads a driver name.
func ParseDriver(s string) (Driver, error) {
	switch d := Driver(s); d {
	case Cgroupfs, Systemd:
		return d, nil
	}
	return "", fmt.Errorf("unknown cgroup driver %q (known: cgroupfs, systemd)", s)
}

// Layout places the kubelet's cgroups.
type Layout struct {
	// Root is where the cgroup v2 hierarchy is mounted.
	Root string
	// Driver is the kubelet's cgroup driver.
	Driver Driver
	// KubeletRoot is the kubelet's --cgroup-root below Root ("" or "/"
	// for the top).
	KubeletRoot string
}

// Kubepods is the directory of all pods' cgroups.
func (l Layout) Kubepods() string {
	name := "kubepods"
	if l.Driver == Systemd {
		name = "kubepods.slice"
	}
	return filepath.Join(l.Root, strings.TrimPrefix(l.KubeletRoot, "/"), name)
}

// Pod is the directory of a pod's cgroup, by its Kubernetes QoS class:
// Guaranteed pods directly under kubepods, the others under their class.
func (l Layout) Pod(class corev1.PodQOSClass, uid types.UID) string {
	sub := ""
	switch class {
	case corev1.PodQOSBurstable:
		sub = "burstable"
	case corev1.PodQOSBestEffort:
		sub = "besteffort"
	}
	if l.Driver == Systemd {
		// kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice,
		// the uid's dashes as underscores.
		id := strings.ReplaceAll(string(uid), "-", "_")
		if sub == "" {
			return filepath.Join(l.Kubepods(), "kubepods-pod"+id+".slice")
		}
		return filepath.Join(l.Kubepods(), "kubepods-"+sub+".slice", "kubepods-"+sub+"-pod"+id+".slice")
	}
	if sub == "" {
		return filepath.Join(l.Kubepods(), "pod"+string(uid))
	}
	return filepath.Join(l.Kubepods(), sub, "pod"+string(uid))
}

// Container is the directory of a container's cgroup in its pod's, from
// the container ID of its status ("containerd://<id>"); "" when the ID is
// empty or malformed.
func (l Layout) Container(podDir, containerID string) string {
	runtime, id, ok := strings.Cut(containerID, "://")
	if !ok || id == "" {
		return ""
	}
	if l.Driver != Systemd {
		return filepath.Join(podDir, id)
	}
	prefix := runtime
	switch runtime {
	case "containerd":
		prefix = "cri-containerd"
	case "cri-o":
		prefix = "crio"
	}
	return filepath.Join(podDir, prefix+"-"+id+".scope")
}

// Read returns a cgroup interface file's content without its trailing
// newline.
func Read(dir, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// Write sets a cgroup interface file to value unless it holds it already;
// changed says whether it wrote. A missing cgroup (the pod or container
// not created yet, or gone) is ErrNoCgroup.
func Write(dir, file, value string) (changed bool, err error) {
	cur, err := Read(dir, file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
			return false, fmt.Errorf("%s: %w", dir, ErrNoCgroup)
		}
		// The directory is there, the file not (yet): the kernel creates
		// interface files with the directory, so this is a tree a test
		// or an older kernel lays out; write it.
	case err != nil:
		return false, err
	case cur == value:
		return false, nil
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value+"\n"), 0o644); err != nil {
		return false, fmt.Errorf("writing %s to %s: %w", value, filepath.Join(dir, file), err)
	}
	return true, nil
}

// ErrNoCgroup: the cgroup directory does not exist.
var ErrNoCgroup = errors.New("no such cgroup")

// CPUUsage is the cgroup's CPU time so far, in microseconds (usage_usec
// of cpu.stat).
func CPUUsage(dir string) (int64, error) {
	s, err := Read(dir, "cpu.stat")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no usage_usec", filepath.Join(dir, "cpu.stat"))
}

// MemoryUsage is the cgroup's memory in use, in bytes (memory.current).
func MemoryUsage(dir string) (int64, error) {
	s, err := Read(dir, "memory.current")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
}

// MemInfoUsed is the memory in use on the node from a /proc/meminfo
// file: MemTotal minus MemAvailable, in bytes.
func MemInfoUsed(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var total, avail int64 = -1, -1
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = v * 1024
		case "MemAvailable:":
			avail = v * 1024
		}
	}
	if total < 0 || avail < 0 {
		return 0, fmt.Errorf("%s: no MemTotal or MemAvailable", path)
	}
	return total - avail, nil
}
