package model

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/quantity"
)

// Queue is a row of the queue tree.
type Queue struct {
	Name string `json:"name"`
	// Parent is "" for a queue at the top of a tree.
	Parent string `json:"parent,omitempty"`
	// Depth is 0 at the top of a tree.
	Depth    int    `json:"depth"`
	State    string `json:"state"`
	Weight   int32  `json:"weight"`
	Priority int32  `json:"priority,omitempty"`
	// Resources are the queue's numbers per resource, cpu and memory first.
	Resources []QueueResource `json:"resources"`
	// PodGroups counts the queue's PodGroups by phase, as the Queue's
	// status does.
	PodGroups map[string]int32 `json:"podGroups"`
	// Jobs counts the rows of the job list in the queue.
	Jobs int `json:"jobs"`
}

// QueueResource is one resource of a queue, each amount as the Queue
// writes it ("" where the Queue sets none).
type QueueResource struct {
	Resource   string `json:"resource"`
	Allocated  string `json:"allocated"`
	Deserved   string `json:"deserved"`
	Guarantee  string `json:"guarantee"`
	Capability string `json:"capability"`
	// Share is the allocation as a fraction of what the queue deserves, or
	// of its capability when it deserves nothing set; ShareOf says which
	// ("deserved", "capability", or "" when neither is set and Share is 0).
	Share   float64 `json:"share"`
	ShareOf string  `json:"shareOf,omitempty"`
}

// Share kinds.
const (
	ShareOfDeserved   = "deserved"
	ShareOfCapability = "capability"
)

func (m *Model) buildQueues(in Input) {
	jobs := map[string]int{}
	for _, j := range m.jobs {
		jobs[j.Queue]++
	}
	for _, q := range treeOrder(in.Queues) {
		o := q.queue
		m.queueByKey[o.Name] = o
		row := Queue{
			Name: o.Name, Parent: q.parent, Depth: q.depth, State: string(o.Status.State),
			Weight: o.Spec.Weight, Priority: o.Spec.Priority, Jobs: jobs[o.Name], Resources: []QueueResource{},
			PodGroups: map[string]int32{
				string(schedulingv1beta1.PodGroupPending):   o.Status.Pending,
				string(schedulingv1beta1.PodGroupInqueue):   o.Status.Inqueue,
				string(schedulingv1beta1.PodGroupRunning):   o.Status.Running,
				string(schedulingv1beta1.PodGroupUnknown):   o.Status.Unknown,
				string(schedulingv1beta1.PodGroupCompleted): o.Status.Completed,
			},
		}
		for _, r := range quantity.SortedNames(o.Status.Allocated, o.Spec.Deserved, o.Spec.Guarantee.Resource, o.Spec.Capability) {
			row.Resources = append(row.Resources, queueResource(o, r))
		}
		m.queues = append(m.queues, row)
	}
}

func queueResource(q *schedulingv1beta1.Queue, r corev1.ResourceName) QueueResource {
	out := QueueResource{
		Resource:   string(r),
		Allocated:  written(q.Status.Allocated, r),
		Deserved:   written(q.Spec.Deserved, r),
		Guarantee:  written(q.Spec.Guarantee.Resource, r),
		Capability: written(q.Spec.Capability, r),
	}
	alloc := q.Status.Allocated[r]
	of, kind := q.Spec.Deserved[r], ShareOfDeserved
	if _, ok := q.Spec.Deserved[r]; !ok {
		of, kind = q.Spec.Capability[r], ShareOfCapability
		if _, ok := q.Spec.Capability[r]; !ok {
			return out
		}
	}
	out.ShareOf = kind
	if !of.IsZero() {
		out.Share = float64(alloc.MilliValue()) / float64(of.MilliValue())
	}
	return out
}

func written(rl corev1.ResourceList, r corev1.ResourceName) string {
	q, ok := rl[r]
	if !ok {
		return ""
	}
	return q.String()
}

// placedQueue is a queue in tree order.
type placedQueue struct {
	queue  *schedulingv1beta1.Queue
	parent string
	depth  int
}

// treeOrder lists the queues depth first, children by name. A queue whose
// parent does not exist is at the top of its own tree, as is root; a queue
// naming no parent is root's child.
func treeOrder(queues []*schedulingv1beta1.Queue) []placedQueue {
	byName := map[string]*schedulingv1beta1.Queue{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	children := map[string][]string{}
	var roots []string
	for _, q := range queues {
		parent := q.Spec.Parent
		if parent == "" && q.Name != schedulingv1beta1.RootQueue {
			parent = schedulingv1beta1.RootQueue
		}
		if _, ok := byName[parent]; !ok || q.Name == schedulingv1beta1.RootQueue || parent == q.Name {
			roots = append(roots, q.Name)
			continue
		}
		children[parent] = append(children[parent], q.Name)
	}
	slices.Sort(roots)
	out := make([]placedQueue, 0, len(queues))
	seen := map[string]bool{}
	var walk func(name, parent string, depth int)
	walk = func(name, parent string, depth int) {
		if seen[name] {
			return
		}
		seen[name] = true
		out = append(out, placedQueue{queue: byName[name], parent: parent, depth: depth})
		kids := children[name]
		slices.Sort(kids)
		for _, k := range kids {
			walk(k, name, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, "", 0)
	}
	// Queues in a cycle of parents reach no root: list them at the top.
	var rest []string
	for _, q := range queues {
		if !seen[q.Name] {
			rest = append(rest, q.Name)
		}
	}
	slices.Sort(rest)
	for _, r := range rest {
		walk(r, "", 0)
	}
	return out
}

// Queues returns the queue tree, depth first, children by name.
func (m *Model) Queues() []Queue { return orEmpty(m.queues) }
