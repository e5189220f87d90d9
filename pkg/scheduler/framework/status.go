package framework

import (
	"fmt"
	"slices"
	"strings"
)

// Code says how a task failed to fit a node, with kube-scheduler's codes.
// The zero value is Unschedulable.
type Code int

const (
	// Unschedulable: the node does not fit now; removing pods from it may
	// change that (insufficient resources, anti-affinity of running pods).
	// It is the only code preemption and reclaim act on.
	Unschedulable Code = iota
	// UnschedulableAndUnresolvable: removing pods cannot help (node
	// affinity, taints, volume topology, a node of another node group).
	UnschedulableAndUnresolvable
	// Error: a plugin failed, so whether the task fits is unknown; nothing
	// is evicted to cure it.
	Error
	// Pending: the task waits for something outside the scheduler.
	Pending
	// Wait: a permit plugin holds the task.
	Wait
	// Skip: the plugin has nothing to say about the task.
	Skip
)

var codeNames = [...]string{"Unschedulable", "UnschedulableAndUnresolvable", "Error", "Pending", "Wait", "Skip"}

func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Status says why a task does not fit a node; nil means it fits.
type Status struct {
	// Plugin is the plugin that rejected, e.g. "NodeResourcesFit".
	Plugin string
	// Reasons are short, node-independent phrases, e.g.
	// "Insufficient nvidia.com/gpu", so that they aggregate across nodes.
	Reasons []string
	// Code is how it failed; Unschedulable unless set.
	Code Code
}

// Unresolvable reports whether removing pods from the node cannot make
// the task fit: every code but Unschedulable. A plugin's error or a
// pending answer is not cured by evicting anyone.
func (s *Status) Unresolvable() bool {
	return s != nil && s.Code != Unschedulable
}

// NewStatus returns a rejection by plugin for the reasons.
func NewStatus(plugin string, reasons ...string) *Status {
	return &Status{Plugin: plugin, Reasons: reasons}
}

// Message joins the plugin and its reasons:
// "NodeResourcesFit: Insufficient cpu, Insufficient memory"; empty for nil.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	msg := strings.Join(s.Reasons, ", ")
	if s.Plugin == "" {
		return msg
	}
	if msg == "" {
		return s.Plugin
	}
	return s.Plugin + ": " + msg
}

func (s *Status) Error() string {
	if s == nil {
		return "fits"
	}
	return s.Message()
}

// Reason is a structured explanation of a decision about a job: why it was
// not admitted, not placed, or not valid.
type Reason struct {
	// Type is a CamelCase word a tool can match on: QueueClosed,
	// QueueOverused, NotEnoughResources, GangShortfall, InvalidGang, ...
	Type string
	// Kind is what blocks the job; blockers are shown in kind order.
	Kind BlockerKind
	// Message is the explanation for people, with the numbers.
	Message string
}

// BlockerKind says what a reason blocks a job on. Kinds are ordered the way
// a user reads them: the job and its queue first, then the queue's limits,
// then placement, topology and preemption.
type BlockerKind int

// Blocker kinds. The zero value is placement, what most reasons are about.
const (
	// KindPlacement: no room for the gang on the nodes.
	KindPlacement BlockerKind = iota
	// KindJob: the job cannot be scheduled as it is (its queue does not
	// exist or is closed, it has fewer pods than its gang).
	KindJob
	// KindQueue: a limit of the job's queue or of an ancestor
	// (capability, deserved share, guarantees of others).
	KindQueue
	// KindTopology: a network topology constraint.
	KindTopology
	// KindPreemption: room is being made by evicting others, or could not
	// be made.
	KindPreemption
)

var kindNames = [...]string{"Placement", "Job", "Queue", "Topology", "Preemption"}

func (k BlockerKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Unknown"
}

// rank orders kinds for people: job, queue, placement, topology,
// preemption.
func (k BlockerKind) rank() int {
	switch k {
	case KindJob:
		return 0
	case KindQueue:
		return 1
	case KindPlacement:
		return 2
	case KindTopology:
		return 3
	}
	return 4
}

// Of returns the reason with its kind set.
func (r *Reason) Of(k BlockerKind) *Reason {
	if r == nil {
		return nil
	}
	c := *r
	c.Kind = k
	return &c
}

func (r *Reason) String() string {
	if r == nil {
		return ""
	}
	return r.Type + ": " + r.Message
}

// Reasonf builds a Reason.
func Reasonf(typ, format string, args ...any) *Reason {
	return &Reason{Type: typ, Message: fmt.Sprintf(format, args...)}
}

// FitErrors counts, over the nodes a task was tried on, how many nodes each
// reason excluded: "3 nodes: Insufficient nvidia.com/gpu; 2 nodes: node(s)
// had untolerated taint {dedicated: infer}".
type FitErrors struct {
	Nodes   int
	reasons map[string]int
}

// Add records a node's rejection.
func (f *FitErrors) Add(s *Status) {
	f.Nodes++
	if f.reasons == nil {
		f.reasons = map[string]int{}
	}
	if s == nil {
		return
	}
	for _, r := range s.Reasons {
		f.reasons[r]++
	}
}

// String renders the counts, most frequent first.
func (f *FitErrors) String() string {
	if f == nil || f.Nodes == 0 {
		return "no nodes were tried"
	}
	type kv struct {
		reason string
		n      int
	}
	var list []kv
	for r, n := range f.reasons {
		list = append(list, kv{r, n})
	}
	slices.SortFunc(list, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.reason, b.reason)
	})
	parts := make([]string, 0, len(list))
	for _, e := range list {
		parts = append(parts, fmt.Sprintf("%d %s %s", e.n, plural(e.n, "node", "nodes"), e.reason))
	}
	return fmt.Sprintf("0/%d nodes are available: %s", f.Nodes, strings.Join(parts, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
