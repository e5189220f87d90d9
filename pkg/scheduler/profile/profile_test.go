package profile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
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
	c, ok := p.Tiers[1].Plugins[1].Plugin.(*capacity.Plugin)
	if !ok {
		t.Fatalf("capacity plugin not built")
	}
	if !c.Hierarchical() {
		t.Errorf("enableHierarchy did not reach the capacity plugin")
	}
	ng, ok := p.Tiers[1].Plugins[2].Plugin.(*nodegroup.Plugin)
	if !ok {
		t.Fatalf("nodegroup plugin not built")
	}
	if !ng.Hierarchical() || ng.Strict() {
		t.Errorf("nodegroup hierarchical=%v strict=%v, want enableHierarchy and strict: false to reach it", ng.Hierarchical(), ng.Strict())
	}
}

// prep is a plugin that prepares binds, failing for the task named fail.
type prep struct {
	name, fail string
	log        *[]string
}

func (p prep) Name() string { return p.name }
func (p prep) PreBind(_ context.Context, t *api.TaskInfo, _ string) error {
	*p.log = append(*p.log, p.name+" prebind "+t.Name)
	if t.Name == p.fail {
		return errors.New("no volume")
	}
	return nil
}
func (p prep) Unreserve(_ context.Context, t *api.TaskInfo) {
	*p.log = append(*p.log, p.name+" unreserve "+t.Name)
}

// TestPreBinders: every plugin that prepares binds is found, whatever its
// name, and run in tier order; when one fails, those before it release
// what they kept.
func TestPreBinders(t *testing.T) {
	var log []string
	p := &Profile{Tiers: []framework.Tier{
		{Plugins: []framework.TierPlugin{{Plugin: prep{name: "a", log: &log}}}},
		{Plugins: []framework.TierPlugin{{Plugin: prep{name: "b", fail: "bad", log: &log}}}},
	}}
	pb := p.PreBinder()
	if ps, ok := pb.(PreBinders); !ok || len(ps) != 2 {
		t.Fatalf("pre-binders: %v", pb)
	}
	ctx := t.Context()
	if err := pb.PreBind(ctx, &api.TaskInfo{Name: "ok"}, "n"); err != nil {
		t.Fatal(err)
	}
	if err := pb.PreBind(ctx, &api.TaskInfo{Name: "bad"}, "n"); err == nil || err.Error() != "no volume" {
		t.Fatalf("error %v", err)
	}
	want := []string{"a prebind ok", "b prebind ok", "a prebind bad", "b prebind bad", "a unreserve bad"}
	if strings.Join(log, "; ") != strings.Join(want, "; ") {
		t.Errorf("calls:\n%s\nwant\n%s", strings.Join(log, "; "), strings.Join(want, "; "))
	}
	if (&Profile{}).PreBinder() != nil {
		t.Error("a profile without such plugins has a pre-binder")
	}
}
