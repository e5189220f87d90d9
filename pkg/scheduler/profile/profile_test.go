package profile

import (
	"testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/capacity"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/nodegroup"
)

func TestBuildHonoursSwitches(t *testing.T) {
	cfg, err := config.Load([]byte(`actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enableJobOrder: false
- plugins:
  - name: drf
  - name: capacity
    enableHierarchy: true
  - name: nodegroup
    enableHierarchy: true
    arguments:
      strict: false
`), NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(cfg, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Actions); got != 3 {
		t.Errorf("actions = %d, want 3", got)
	}
	gang := p.Tiers[0].Plugins[1]
	if !gang.Disabled[framework.PointJobOrder] || gang.Disabled[framework.PointJobReady] {
		t.Errorf("gang's disabled points = %v, want only JobOrder", gang.Disabled)
	}
	c, ok := p.Plugin(capacity.Name).(*capacity.Plugin)
	if !ok {
		t.Fatalf("capacity plugin not built")
	}
	if !c.Hierarchical() {
		t.Errorf("enableHierarchy did not reach the capacity plugin")
	}
	ng, ok := p.Plugin(nodegroup.Name).(*nodegroup.Plugin)
	if !ok {
		t.Fatalf("nodegroup plugin not built")
	}
	if !ng.Hierarchical() || ng.Strict() {
		t.Errorf("nodegroup hierarchical=%v strict=%v, want enableHierarchy and strict: false to reach it", ng.Hierarchical(), ng.Strict())
	}
}
