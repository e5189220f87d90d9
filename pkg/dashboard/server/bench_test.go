package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/dashboard/model"
)

// cluster makes a cluster of the size the dashboard is built for: nodes
// 8-GPU nodes under leaves of 16 and spines of 8 leaves, jobs Volcano
// Jobs of 4 pods each (a quarter of them waiting, unplaced) in the 50 leaves of 56 queues
// under 5 parents, spread over 20 namespaces.
func cluster(nodes, jobs int) model.Input {
	in := model.Input{Now: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)}
	q := func(name, parent string) *schedulingv1beta1.Queue {
		o := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
		o.Spec.Parent, o.Spec.Weight = parent, 1
		o.Spec.Deserved = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4000"), "nvidia.com/gpu": resource.MustParse("800")}
		o.Status.Allocated = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3200"), "nvidia.com/gpu": resource.MustParse("640")}
		return o
	}
	in.Queues = append(in.Queues, q("root", ""))
	for p := range 5 {
		in.Queues = append(in.Queues, q(fmt.Sprintf("org-%d", p), "root"))
		for c := range 10 {
			in.Queues = append(in.Queues, q(fmt.Sprintf("team-%d-%d", p, c), fmt.Sprintf("org-%d", p)))
		}
	}
	for i := range nodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%05d", i)}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("128"), corev1.ResourceMemory: resource.MustParse("1Ti"),
			"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		in.Nodes = append(in.Nodes, n)
	}
	leaves := (nodes + 15) / 16
	for l := range leaves {
		h := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("leaf-%04d", l)}}
		h.Spec.Tier = 1
		h.Spec.Members = []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: fmt.Sprintf("^node-%04d[0-9]$", l)}}}}
		in.HyperNodes = append(in.HyperNodes, h)
	}
	for s := range (leaves + 7) / 8 {
		h := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("spine-%03d", s)}}
		h.Spec.Tier = 2
		for l := s * 8; l < min(leaves, s*8+8); l++ {
			h.Spec.Members = append(h.Spec.Members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeHyperNode,
				Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: fmt.Sprintf("leaf-%04d", l)}}})
		}
		in.HyperNodes = append(in.HyperNodes, h)
	}
	node := 0
	for i := range jobs {
		ns := fmt.Sprintf("ns-%02d", i%20)
		j := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("job-%05d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			CreationTimestamp: metav1.NewTime(in.Now.Add(-time.Duration(i) * time.Second))}}
		j.Spec.Queue, j.Spec.MinAvailable = fmt.Sprintf("team-%d-%d", i%5, i%10), 4
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobcore.PodGroupName(j), UID: types.UID(fmt.Sprintf("pg-%d", i))}}
		pg.Spec.Queue, pg.Spec.MinMember = j.Spec.Queue, 4
		waiting := i%4 == 0
		if waiting {
			j.Status.State.Phase, pg.Status.Phase = batchv1alpha1.JobPending, schedulingv1beta1.PodGroupInqueue
			pg.Status.Conditions = []schedulingv1beta1.PodGroupCondition{{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue,
				Message: "4/4 tasks in gang unschedulable: 0/5000 nodes are available, 5000 Insufficient nvidia.com/gpu"}}
		} else {
			j.Status.State.Phase, pg.Status.Phase = batchv1alpha1.JobRunning, schedulingv1beta1.PodGroupRunning
		}
		in.Jobs, in.PodGroups = append(in.Jobs, j), append(in.PodGroups, pg)
		for t := range 4 {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-worker-%d", j.Name, t), UID: types.UID(fmt.Sprintf("p-%d-%d", i, t)),
				Annotations: map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: pg.Name}}}
			p.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), "nvidia.com/gpu": resource.MustParse("2")}}}}
			p.Status.Phase = corev1.PodPending
			if !waiting {
				p.Spec.NodeName, p.Status.Phase = in.Nodes[node%nodes].Name, corev1.PodRunning
				node++
			}
			in.Pods = append(in.Pods, p)
		}
	}
	return in
}

type fixed struct{ in model.Input }

func (f fixed) Snapshot() model.Input  { return f.in }
func (fixed) Changed() <-chan struct{} { return nil }
func (fixed) Scope() string            { return "all namespaces" }
func (fixed) Events(_ context.Context, _ string, _ []types.UID) ([]corev1.Event, error) {
	return nil, nil
}

// BenchmarkDashboardAPI measures the dashboard at the size it is built for,
// 5,000 nodes and 10,000 jobs (40,000 pods): a rebuild of the model after
// a change, and the answer of each endpoint, JSON included. Targets: a
// rebuild under 500 ms (the coalescing window, so that changes never queue
// up behind it) and every answer under 50 ms.
func BenchmarkDashboardAPI(b *testing.B) {
	src := fixed{cluster(5000, 10000)}
	s := New(src, Options{})
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			s.rebuild()
		}
	})
	for _, path := range []string{
		"/api/summary",
		"/api/queues",
		"/api/jobs",
		"/api/jobs?queue=team-3-8&phase=Pending&page=2",
		"/api/jobs?sort=newest&pageSize=500",
		"/api/jobs/Job/ns-03/job-00003",
		"/api/hypernodes",
		"/api/nodes?page=20",
		"/api/nodes?hyperNode=spine-010",
	} {
		b.Run(path, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8095"+path, nil)
			for b.Loop() {
				w := httptest.NewRecorder()
				s.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, w.Code, w.Body)
				}
			}
		})
	}
}
