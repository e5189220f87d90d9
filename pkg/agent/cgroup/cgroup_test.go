package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLayout(t *testing.T) {
	for name, tc := range map[string]struct {
		l         Layout
		class     corev1.PodQOSClass
		pod, cont string
	}{
		"cgroupfs burstable": {Layout{Root: "/sys/fs/cgroup", Driver: Cgroupfs}, corev1.PodQOSBurstable,
			"/sys/fs/cgroup/kubepods/burstable/pod1-2", "/sys/fs/cgroup/kubepods/burstable/pod1-2/abc"},
		"cgroupfs guaranteed under a kubelet root": {Layout{Root: "/sys/fs/cgroup", Driver: Cgroupfs, KubeletRoot: "/k8s"}, corev1.PodQOSGuaranteed,
			"/sys/fs/cgroup/k8s/kubepods/pod1-2", "/sys/fs/cgroup/k8s/kubepods/pod1-2/abc"},
		"systemd besteffort": {Layout{Root: "/sys/fs/cgroup", Driver: Systemd}, corev1.PodQOSBestEffort,
			"/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1_2.slice",
			"/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1_2.slice/cri-containerd-abc.scope"},
		"systemd guaranteed": {Layout{Root: "/sys/fs/cgroup", Driver: Systemd}, corev1.PodQOSGuaranteed,
			"/sys/fs/cgroup/kubepods.slice/kubepods-pod1_2.slice", "/sys/fs/cgroup/kubepods.slice/kubepods-pod1_2.slice/cri-containerd-abc.scope"},
	} {
		t.Run(name, func(t *testing.T) {
			pod := tc.l.Pod(tc.class, "1-2")
			if pod != tc.pod {
				t.Errorf("Pod = %s, want %s", pod, tc.pod)
			}
			if c := tc.l.Container(pod, "containerd://abc"); c != tc.cont {
				t.Errorf("Container = %s, want %s", c, tc.cont)
			}
		})
	}
	if c := (Layout{Driver: Systemd}).Container("/p", "cri-o://x"); c != "/p/crio-x.scope" {
		t.Errorf("cri-o container %s", c)
	}
	if c := (Layout{}).Container("/p", ""); c != "" {
		t.Errorf("container without an ID: %q", c)
	}
}

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte("max 100000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := Write(dir, "cpu.max", "max 100000"); err != nil || changed {
		t.Errorf("writing the value it holds: changed %v, %v", changed, err)
	}
	if changed, err := Write(dir, "cpu.max", "50000 100000"); err != nil || !changed {
		t.Errorf("writing a new value: changed %v, %v", changed, err)
	}
	if v, _ := Read(dir, "cpu.max"); v != "50000 100000" {
		t.Errorf("cpu.max = %q", v)
	}
	if _, err := Write(filepath.Join(dir, "gone"), "cpu.max", "1"); !errors.Is(err, ErrNoCgroup) {
		t.Errorf("writing to a missing cgroup: %v, want ErrNoCgroup", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := CPUUsage(dir); err != nil || v != 123456 {
		t.Errorf("CPUUsage = %d, %v", v, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.current"), []byte("4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := MemoryUsage(dir); err != nil || v != 4096 {
		t.Errorf("MemoryUsage = %d, %v", v, err)
	}
	meminfo := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(meminfo, []byte("MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    4096 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := MemInfoUsed(meminfo); err != nil || v != 12288*1024 {
		t.Errorf("MemInfoUsed = %d, %v", v, err)
	}
}
