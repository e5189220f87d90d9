package tune

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

func container(name string, limits ...string) corev1.Container {
	c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}}
	for i := 0; i < len(limits); i += 2 {
		c.Resources.Limits[corev1.ResourceName(limits[i])] = resource.MustParse(limits[i+1])
		c.Resources.Requests[corev1.ResourceName(limits[i])] = resource.MustParse(limits[i+1])
	}
	return c
}

func withIDs(p *corev1.Pod) *corev1.Pod {
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, ContainerID: "containerd://" + c.Name + "-id"})
	}
	return p
}

func TestPod(t *testing.T) {
	all, err := (&config.Configuration{GlobalConfig: &config.Colocation{
		CPUQoS: &config.CPUQoS{Enable: new(true)}, CPUBurst: &config.CPUBurst{Enable: new(true)},
		MemoryQoS: &config.MemoryQoS{Enable: new(true), HighRatio: new(0.5)},
	}}).ForNode(nil)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := (*config.Configuration)(nil).ForNode(nil)
	fs := cgroup.Layout{Root: "/cg", Driver: cgroup.Cgroupfs}
	sd := cgroup.Layout{Root: "/cg", Driver: cgroup.Systemd}

	offline := withIDs(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "u-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", "kubernetes.io/batch-cpu", "1500", "kubernetes.io/batch-memory", "1Gi"),
			container("b", "kubernetes.io/batch-cpu", "500", "kubernetes.io/batch-memory", "1Gi"),
		}},
	})
	bursty := withIDs(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "u-2", Annotations: map[string]string{BurstAnnotation: "true", BurstTimeAnnotation: "30000"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container("web", "cpu", "1", "memory", "1Gi")}},
	})
	for name, tc := range map[string]struct {
		l     cgroup.Layout
		pod   *corev1.Pod
		class qos.Class
		cfg   config.Node
		want  []Setting
	}{
		"offline pod, everything on": {l: fs, pod: offline, class: qos.BestEffort, cfg: all, want: []Setting{
			{"/cg/kubepods/besteffort/podu-1", "cpu.weight", "1"},
			{"/cg/kubepods/besteffort/podu-1", "cpu.idle", "1"},
			{"/cg/kubepods/besteffort/podu-1/a-id", "cpu.max", "150000 100000"},
			{"/cg/kubepods/besteffort/podu-1/a-id", "memory.max", "1073741824"},
			{"/cg/kubepods/besteffort/podu-1/a-id", "memory.high", "536870912"},
			{"/cg/kubepods/besteffort/podu-1/b-id", "cpu.max", "50000 100000"},
			{"/cg/kubepods/besteffort/podu-1/b-id", "memory.max", "1073741824"},
			{"/cg/kubepods/besteffort/podu-1/b-id", "memory.high", "536870912"},
			{"/cg/kubepods/besteffort/podu-1", "cpu.max", "200000 100000"},
			{"/cg/kubepods/besteffort/podu-1", "memory.max", "2147483648"},
			{"/cg/kubepods/besteffort/podu-1", "memory.high", "1073741824"},
		}},
		"offline pod, defaults: only its limits": {l: sd, pod: offline, class: qos.BestEffort, cfg: none, want: []Setting{
			{"/cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice/cri-containerd-a-id.scope", "cpu.max", "150000 100000"},
			{"/cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice/cri-containerd-a-id.scope", "memory.max", "1073741824"},
			{"/cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice/cri-containerd-b-id.scope", "cpu.max", "50000 100000"},
			{"/cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice/cri-containerd-b-id.scope", "memory.max", "1073741824"},
			{"/cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice", "cpu.max", "200000 100000"},
			{"/cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice", "memory.max", "2147483648"},
		}},
		"guaranteed online pod with burst": {l: fs, pod: bursty, class: qos.LatencyCritical, cfg: all, want: []Setting{
			{"/cg/kubepods/podu-2", "cpu.weight", "1000"},
			{"/cg/kubepods/podu-2/web-id", "cpu.max.burst", "30000"},
			{"/cg/kubepods/podu-2", "cpu.max.burst", "30000"},
		}},
		"burst off by configuration": {l: fs, pod: bursty, class: qos.LatencySensitive, cfg: none},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Pod(tc.l, tc.pod, tc.class, tc.cfg)); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}
