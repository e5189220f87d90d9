//go:build integration

package agent

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/agent"
	"github.com/caldera-sh/caldera/pkg/agent/numatopo"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// TestNUMAReporter: the agent's report of the node's NUMA topology is
// created, rewritten only when the node's CPUs change (not when read again,
// not by a restarted agent), put right after someone else changed it, and
// read by the scheduler as published.
func TestNUMAReporter(t *testing.T) {
	ctx := t.Context()
	const node = "numa-report-0"
	// Two NUMA nodes of two CPUs, one core each.
	sys := fstest.MapFS{
		"devices/system/cpu/online":         {Data: []byte("0-3\n")},
		"devices/system/node/online":        {Data: []byte("0-1\n")},
		"devices/system/node/node0/cpulist": {Data: []byte("0-1\n")},
		"devices/system/node/node1/cpulist": {Data: []byte("2-3\n")},
	}
	for id := range 4 {
		dir := fmt.Sprintf("devices/system/cpu/cpu%d/topology/", id)
		sys[dir+"physical_package_id"] = &fstest.MapFile{Data: []byte(fmt.Sprint(id / 2))}
		sys[dir+"core_id"] = &fstest.MapFile{Data: []byte(fmt.Sprint(id / 2))}
	}
	state := `{"policyName":"static","defaultCpuSet":"0-3","entries":{}}`
	sources := func() (numatopo.Sources, error) {
		return numatopo.Sources{Sys: sys, CPUManagerState: []byte(state),
			KubeletConfig: []byte("cpuManagerPolicy: static\ntopologyManagerPolicy: single-numa-node\n")}, nil
	}
	get := func() *nodeinfov1alpha1.Numatopology {
		t.Helper()
		var nt nodeinfov1alpha1.Numatopology
		if err := fw.Client.Get(ctx, client.ObjectKey{Name: node}, &nt); err != nil {
			t.Fatal(err)
		}
		return &nt
	}
	report := func(r *agent.NUMAReporter) {
		t.Helper()
		if err := r.Report(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = fw.Client.Delete(context.Background(), &nodeinfov1alpha1.Numatopology{ObjectMeta: metav1.ObjectMeta{Name: node}})
	})

	// The API server keeps an update that changes nothing without a new
	// resourceVersion, so the writes are counted on the way.
	counted := &countingClient{Client: fw.Client}
	r := &agent.NUMAReporter{Node: node, Client: counted, Sources: sources}
	report(r)
	first := get()
	if got := first.Spec.NumaResMap["cpu"]; got.Allocatable != "0-3" || got.Capacity != 4 {
		t.Fatalf("published cpu %+v", got)
	}
	report(r)
	report(&agent.NUMAReporter{Node: node, Client: counted, Sources: sources})
	if writes := counted.writes; writes != 1 {
		t.Errorf("%d writes for one report read three times, one by a restarted agent; want 1", writes)
	}

	// A container pins CPU 2.
	state = `{"policyName":"static","defaultCpuSet":"0-1,3","entries":{"pod-1":{"main":"2"}}}`
	report(r)
	pinned := get()
	if pinned.Spec.NumaResMap["cpu"].Allocatable != "0-1,3" || len(pinned.Spec.PodAllocations) != 1 {
		t.Fatalf("after pinning: %+v", pinned.Spec)
	}

	// Someone else rewrites the report: the agent's next write conflicts,
	// and the one after reads the object again and puts it right.
	other := pinned.DeepCopy()
	other.Spec.NumaResMap = map[string]nodeinfov1alpha1.ResourceInfo{"cpu": {Allocatable: "0", Capacity: 4}}
	if err := fw.Client.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	state = `{"policyName":"static","defaultCpuSet":"0-1","entries":{"pod-1":{"main":"2"},"pod-2":{"main":"3"}}}`
	if err := r.Report(ctx); err == nil {
		t.Fatal("a write over someone else's succeeded without reading it")
	}
	report(r)
	want, err := numatopo.Spec(must(sources()))
	if err != nil {
		t.Fatal(err)
	}
	final := get()
	if diff := cmp.Diff(want, final.Spec); diff != "" {
		t.Fatalf("report after the conflict (-want,+got):\n%s", diff)
	}
	rep, err := numa.FromNumatopology(final)
	if err != nil {
		t.Fatalf("the scheduler does not read the report: %v", err)
	}
	if _, reason := numa.Admit(&rep.Node, numa.SingleNUMANode, []int64{2}); reason != "" {
		t.Errorf("2 CPUs on node 0's free pair refused: %s", reason)
	}
	if _, reason := numa.Admit(&rep.Node, numa.SingleNUMANode, []int64{3}); reason == "" {
		t.Errorf("3 CPUs admitted with 2 free")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// countingClient counts the writes made through it.
type countingClient struct {
	client.Client
	writes int
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.writes++
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.writes++
	return c.Client.Update(ctx, obj, opts...)
}
