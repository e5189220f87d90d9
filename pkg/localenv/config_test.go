package localenv

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/controllers/hypernode"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
)

// TestConfigurationsLoad: the configurations the local environment hands
// its components are valid, so that make run never fails on its own input.
func TestConfigurationsLoad(t *testing.T) {
	if _, err := config.Load([]byte(SchedulerConfig), profile.NameRegistry()); err != nil {
		t.Errorf("scheduler configuration: %v", err)
	}
	cfg, err := hypernode.LoadConfig([]byte(HyperNodeDiscovery))
	if err != nil {
		t.Fatalf("HyperNode discovery: %v", err)
	}
	var leaves, spines int
	for _, hn := range hypernode.Discover(cfg, nodeObjects()) {
		switch hn.Spec.TierName {
		case "leaf":
			leaves++
		case "spine":
			spines++
		}
	}
	if leaves != 3 || spines != 2 {
		t.Errorf("discovered %d leaves and %d spines from the default nodes, want 3 and 2", leaves, spines)
	}
}

func nodeObjects() []*corev1.Node {
	var out []*corev1.Node
	for _, s := range DefaultNodes() {
		out = append(out, s.Node())
	}
	return out
}
