package api

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

func testNode(name string, alloc corev1.ResourceList) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: alloc}}
}

func testPod(name string, req corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}}},
	}
}

func TestNodeAccountsFollowTasks(t *testing.T) {
	n := NewNodeInfo(testNode("n", rl("cpu", "4", "memory", "8Gi", "pods", "110")))
	job := NewJobInfo("ns/j")
	a := NewTaskInfo(testPod("a", rl("cpu", "1", "memory", "1Gi")), job.UID)
	b := NewTaskInfo(testPod("b", rl("cpu", "2")), job.UID)
	job.AddTask(a)
	job.AddTask(b)

	job.SetTaskStatus(a, Allocated)
	n.AddTask(a)
	job.SetTaskStatus(b, Pipelined)
	n.AddTask(b)

	if got, want := n.Idle.String(), "cpu 3, memory 7Gi, pods 109"; got != want {
		t.Errorf("idle = %q, want %q", got, want)
	}
	if got, want := n.Pipelined.String(), "cpu 2, pods 1"; got != want {
		t.Errorf("pipelined = %q, want %q", got, want)
	}
	// The job counts what it holds and what it claims.
	if got, want := job.Allocated.String(), "cpu 3, memory 1Gi, pods 2"; got != want {
		t.Errorf("job allocated = %q, want %q", got, want)
	}
	if got := job.PlacedCount(); got != 2 {
		t.Errorf("placed = %d, want 2", got)
	}

	// A task being deleted still takes room on its node, but no longer
	// counts for its job.
	n.RemoveTask(klog.Background(), a)
	job.SetTaskStatus(a, Releasing)
	n.AddTask(a)
	if got, want := job.Allocated.String(), "cpu 2, pods 1"; got != want {
		t.Errorf("job allocated with a releasing = %q, want %q", got, want)
	}
	if got, want := n.Releasing.String(), "cpu 1, memory 1Gi, pods 1"; got != want {
		t.Errorf("releasing = %q, want %q", got, want)
	}
	if got, want := n.Idle.String(), "cpu 3, memory 7Gi, pods 109"; got != want {
		t.Errorf("idle with a releasing = %q, want %q", got, want)
	}

	clone := n.Clone()
	n.RemoveTask(klog.Background(), a)
	n.RemoveTask(klog.Background(), b)
	if !n.Idle.Equal(n.Allocatable) || !n.Pipelined.IsEmpty() {
		t.Errorf("after removing every task: idle %s, pipelined %s", n.Idle, n.Pipelined)
	}
	if got := clone.Used.MilliCPU; got != 1000 || len(clone.Tasks) != 2 {
		t.Errorf("clone changed with the original: used %dm, tasks %d", got, len(clone.Tasks))
	}
}

// TestFutureIdleFollowsTasks places, moves and removes tasks of every
// status on a node, and its clones, at random: the future idle resources
// the node keeps must always equal Idle + Releasing - Pipelined, and
// FitsFuture must agree with checking against that sum.
func TestFutureIdleFollowsTasks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := NewNodeInfo(testNode("n", rl("cpu", "16", "memory", "64Gi", "pods", "110", "nvidia.com/gpu", "8")))
	statuses := []TaskStatus{Pending, Allocated, Pipelined, Binding, Bound, Running, Releasing, Succeeded}
	var tasks []*TaskInfo
	for i := range 400 {
		switch op := r.IntN(4); {
		case op == 0 || len(tasks) == 0:
			req := rl("cpu", fmt.Sprint(1+r.IntN(4)), "nvidia.com/gpu", fmt.Sprint(r.IntN(3)))
			if r.IntN(3) == 0 {
				req = rl("memory", "2Gi", "example.com/fpga", "1")
			}
			tk := NewTaskInfo(testPod(fmt.Sprintf("p%d", i), req), "ns/j")
			tk.Status = statuses[r.IntN(len(statuses))]
			tasks = append(tasks, tk)
			n.AddTask(tk)
		case op == 1:
			k := r.IntN(len(tasks))
			n.RemoveTask(klog.Background(), tasks[k])
			tasks = append(tasks[:k], tasks[k+1:]...)
		case op == 2:
			tk := tasks[r.IntN(len(tasks))]
			n.RemoveTask(klog.Background(), tk)
			tk.Status = statuses[r.IntN(len(statuses))]
			n.AddTask(tk)
		default:
			n = n.Clone()
		}
		want := n.Idle.Clone().Add(n.Releasing).Sub(n.Pipelined)
		if got := n.FutureIdle(); !got.Equal(want) {
			t.Fatalf("step %d: future idle %s, want %s", i, got, want)
		}
		req := NewResource(rl("cpu", fmt.Sprint(r.IntN(8)), "nvidia.com/gpu", fmt.Sprint(r.IntN(4)), "example.com/fpga", fmt.Sprint(r.IntN(2))))
		if got, want := n.FitsFuture(req), req.LessEqualWith(n.Idle, n.Releasing, n.Pipelined); got != want {
			t.Fatalf("step %d: FitsFuture(%s) = %v with future idle %s, want %v", i, req, got, n.FutureIdle(), want)
		}
		if short := n.AppendShortOf(nil, req); (len(short) == 0) != n.FitsFuture(req) {
			t.Fatalf("step %d: short of %v for %s with future idle %s, fits %v", i, short, req, n.FutureIdle(), n.FitsFuture(req))
		}
	}
}
