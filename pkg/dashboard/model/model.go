// Package model turns the objects the dashboard watches into what its pages
// show: the queue tree with each queue's numbers per resource, the jobs and
// PodGroups with their pods, the HyperNode tree with its occupancy, and the
// nodes with their GPU cards. It is pure: objects in, views out; the server
// (package server) builds a Model when the objects change and answers every
// request from the last one.
//
// The numbers a queue shows are the Queue's own (spec.deserved,
// spec.guarantee, spec.capability, status.allocated), written as the API
// writes them, so the page says exactly what `kubectl get queue -o yaml`
// says. Counts of pods and requests are the model's: a pod is counted once,
// on its node, in its PodGroup and so in its queue.
package model

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/quantity"
	schedapi "github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/topology"
)

// Input is what the dashboard watches. A kind the user may not list is
// nil and named in Denied.
type Input struct {
	Now        time.Time
	Queues     []*schedulingv1beta1.Queue
	Jobs       []*batchv1alpha1.Job
	PodGroups  []*schedulingv1beta1.PodGroup
	HyperNodes []*topologyv1alpha1.HyperNode
	Nodes      []*corev1.Node
	Pods       []*corev1.Pod
	// Denied maps a kind ("queues", "nodes", ...) to why the dashboard
	// cannot show it, such as the API server's refusal.
	Denied map[string]string
	// Federation is what the Karmada API server holds; nil when the
	// dashboard watches none.
	Federation *FederationInput
}

// Amounts are amounts of resources in thousandths of their unit.
type Amounts map[corev1.ResourceName]int64

func (a Amounts) add(b Amounts, sign int64) {
	for r, v := range b {
		a[r] += sign * v
	}
}

func amountsOf(rl corev1.ResourceList) Amounts {
	out := Amounts{}
	for r, q := range rl {
		out[r] = q.MilliValue()
	}
	return out
}

// format writes an amount as the API would (16Gi, 500m, 4); an amount of
// bytes that is no whole number of KiB (as a node's
// kubernetes.io/batch-memory usually is) to the nearest Mi, which a person
// reads more easily than ten digits.
func format(r corev1.ResourceName, milli int64) string {
	if v := milli / 1000; quantity.IsBytes(r) && v%1024 != 0 && v >= 1<<20 {
		return quantity.Bytes((v + 1<<19) >> 20 << 20).String()
	}
	return quantity.Milli(r, milli).String()
}

// Model is the views of one Input. It is not changed after Build, so any
// number of requests may read it at once.
type Model struct {
	now    time.Time
	denied map[string]string

	queues     []Queue
	queueByKey map[string]*schedulingv1beta1.Queue
	jobs       []Job
	jobByKey   map[string]*jobEntry
	hyperNodes []HyperNode
	nodes      []Node
	federation Federation
	totals     Totals
}

// jobEntry is what a job's page needs beyond its row.
type jobEntry struct {
	row      *Job
	job      *batchv1alpha1.Job
	podGroup *schedulingv1beta1.PodGroup
	pods     []*corev1.Pod
}

// Totals are the headline counts.
type Totals struct {
	Queues     int            `json:"queues"`
	Jobs       int            `json:"jobs"`
	JobPhases  map[string]int `json:"jobPhases"`
	Nodes      int            `json:"nodes"`
	ReadyNodes int            `json:"readyNodes"`
	HyperNodes int            `json:"hyperNodes"`
	// Pods counts the pods that are not finished; BoundPods those of them
	// on a node.
	Pods      int `json:"pods"`
	BoundPods int `json:"boundPods"`
	// Federation says whether the dashboard watches a Karmada API server;
	// Members, ReadyMembers and HeldBindings count its member clusters and
	// the bindings caldera-global holds.
	Federation   bool `json:"federation,omitempty"`
	Members      int  `json:"members,omitempty"`
	ReadyMembers int  `json:"readyMembers,omitempty"`
	HeldBindings int  `json:"heldBindings,omitempty"`
	// Denied maps a kind to why it is not shown.
	Denied map[string]string `json:"denied,omitempty"`
}

// Build computes the views of the input.
func Build(in Input) *Model {
	m := &Model{now: in.Now, denied: in.Denied, queueByKey: map[string]*schedulingv1beta1.Queue{}, jobByKey: map[string]*jobEntry{}}
	pods := groupPods(in.Pods)
	m.buildJobs(in, pods)
	m.buildQueues(in)
	tree := topology.Build(in.HyperNodes, in.Nodes)
	m.buildNodes(in, pods, tree)
	m.buildHyperNodes(tree)
	m.federation = buildFederation(in.Federation, in.Now)
	m.totals = Totals{
		Queues: len(m.queues), Jobs: len(m.jobs), JobPhases: map[string]int{},
		Nodes: len(m.nodes), HyperNodes: len(m.hyperNodes), Denied: in.Denied,
	}
	for _, j := range m.jobs {
		m.totals.JobPhases[j.Phase]++
	}
	m.totals.Federation, m.totals.Members, m.totals.HeldBindings = m.federation.Enabled, len(m.federation.Members), len(m.federation.Held)
	for _, mb := range m.federation.Members {
		if mb.Ready {
			m.totals.ReadyMembers++
		}
	}
	for _, n := range m.nodes {
		if n.Ready {
			m.totals.ReadyNodes++
		}
	}
	for _, p := range in.Pods {
		if finished(p) {
			continue
		}
		m.totals.Pods++
		if p.Spec.NodeName != "" {
			m.totals.BoundPods++
		}
	}
	return m
}

// Federation returns the federation page.
func (m *Model) Federation() Federation { return m.federation }

// Totals returns the headline counts.
func (m *Model) Totals() Totals { return m.totals }

// Now is the time the model was built for.
func (m *Model) Now() time.Time { return m.now }

// podIndex holds the pods by PodGroup and, with their requests, by node.
type podIndex struct {
	byGroup map[string][]*corev1.Pod
	byNode  map[string][]placedPod
}

// placedPod is a pod that holds room on its node.
type placedPod struct {
	pod *corev1.Pod
	req Amounts
}

func groupPods(pods []*corev1.Pod) podIndex {
	idx := podIndex{byGroup: map[string][]*corev1.Pod{}, byNode: map[string][]placedPod{}}
	for _, p := range pods {
		if g := podGroupOf(p); g != "" {
			k := key(p.Namespace, g)
			idx.byGroup[k] = append(idx.byGroup[k], p)
		}
		if p.Spec.NodeName != "" && !finished(p) {
			idx.byNode[p.Spec.NodeName] = append(idx.byNode[p.Spec.NodeName], placedPod{pod: p, req: requests(p)})
		}
	}
	for _, l := range idx.byGroup {
		slices.SortFunc(l, byObjectName)
	}
	for _, l := range idx.byNode {
		slices.SortFunc(l, func(a, b placedPod) int { return byObjectName(a.pod, b.pod) })
	}
	return idx
}

func byObjectName(a, b *corev1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// podGroupOf is the PodGroup a pod names, under either annotation.
func podGroupOf(p *corev1.Pod) string {
	if g := p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]; g != "" {
		return g
	}
	return p.Annotations[schedulingv1beta1.GroupNameAnnotation]
}

// finished reports whether a pod holds nothing on its node any more.
func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func requests(p *corev1.Pod) Amounts {
	return amountsOf(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
}

func key(namespace, name string) string { return namespace + "/" + name }

// cardsOf reads the cards a pod was given; a malformed annotation is none.
func cardsOf(p *corev1.Pod) []int {
	cards, err := schedapi.ParseGPUIndex(p.Annotations[schedulingv1beta1.GPUIndexAnnotation])
	if err != nil {
		return nil
	}
	return cards
}

// podGroupName is the PodGroup the job controller makes for a job.
func podGroupName(j *batchv1alpha1.Job) string { return jobcore.PodGroupName(j) }

// orEmpty is the list, or an empty one for nil: the API answers [] rather
// than null.
func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
