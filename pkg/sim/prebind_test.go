package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// preBinds records the binds it prepares and refuses those of one pod.
type preBinds struct {
	prepared []string
	refuse   string
}

func (p *preBinds) PreBind(_ context.Context, t *api.TaskInfo, node string) error {
	if t.Name == p.refuse {
		return errors.New("volume not bindable")
	}
	p.prepared = append(p.prepared, t.Name+"@"+node)
	return nil
}

func (p *preBinds) Unreserve(context.Context, *api.TaskInfo) {}

// TestBindsArePreparedAsTheBinderDoes: every bind goes through the
// PreBinder first, and a bind it refuses does not happen.
func TestBindsArePreparedAsTheBinderDoes(t *testing.T) {
	prof := contendProfile(t)
	pb := &preBinds{refuse: "refused"}
	c := New(Options{Actions: prof.Actions, Tiers: prof.Tiers, Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), PreBinder: pb})
	c.AddQueue(schedtesting.MakeQueue("default").Obj())
	c.AddNode(st.MakeNode("n").Alloc("cpu", "8", "memory", "16Gi", "pods", "10").Obj())
	for _, name := range []string{"bound", "refused"} {
		c.AddPodGroup(schedtesting.MakePodGroup(name, "ns").Queue("default").MinMember(1).Obj())
		c.AddPod(jobPod(name, name, "1"), time.Hour)
	}
	c.Cycle(t.Context())
	c.Cycle(t.Context())
	if len(pb.prepared) != 1 || pb.prepared[0] != "bound@n" {
		t.Errorf("prepared %v, want [bound@n]", pb.prepared)
	}
	phases := map[string]corev1.PodPhase{}
	for _, p := range c.Pods() {
		phases[p.Name] = p.Status.Phase
	}
	if phases["bound"] != corev1.PodRunning || phases["refused"] != corev1.PodPending {
		t.Errorf("phases %v: want bound Running, refused Pending", phases)
	}
}
