package tune

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

// TestOfflinePodExample: the pod of examples/agent is offline and held to
// its batch limits, 2 CPUs and 4Gi, as docs/colocation.md says.
func TestOfflinePodExample(t *testing.T) {
	raw, err := os.ReadFile("../../../examples/agent/offline-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &pod); err != nil {
		t.Fatal(err)
	}
	pod.UID = "u"
	class, err := qos.Of(&pod)
	if err != nil || class != qos.BestEffort {
		t.Fatalf("class %s, %v; want BE", class, err)
	}
	cfg, _ := (*config.Configuration)(nil).ForNode(nil)
	got := map[string]string{}
	for _, s := range Pod(cgroup.Layout{Root: "/cg", Driver: cgroup.Cgroupfs}, &pod, class, cfg) {
		if s.Dir == "/cg/kubepods/besteffort/podu" {
			got[s.File] = s.Value
		}
	}
	if got["cpu.max"] != "200000 100000" || got["memory.max"] != "4294967296" {
		t.Errorf("pod cgroup settings %v, want cpu.max 200000 100000 and memory.max 4294967296", got)
	}
}
