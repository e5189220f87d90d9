package model

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

// FederationInput is what the dashboard watches on the Karmada API server
// when it is given one: the member clusters, the ResourceBindings
// caldera-global holds or has released, and the events in which it says
// why it holds one.
type FederationInput struct {
	// Host is the Karmada API server's address.
	Host     string
	Clusters []*clusterv1alpha1.Cluster
	Bindings []*workv1alpha2.ResourceBinding
	Events   []*corev1.Event
	// Denied maps a kind ("clusters", "resourcebindings", "events") to why
	// the dashboard cannot show it.
	Denied map[string]string
}

// Federation is the federation page: the members and the held work.
type Federation struct {
	// Enabled is false when the dashboard was not given a Karmada API
	// server; the rest is then empty.
	Enabled bool   `json:"enabled"`
	Host    string `json:"host,omitempty"`
	// Members are the member clusters by name.
	Members []Member `json:"members"`
	// Held are the bindings caldera-global holds (scheduling suspended, no
	// cluster chosen), the longest held first.
	Held []HeldBinding `json:"held"`
	// HeldByRule counts the held bindings by the rule that holds them
	// ("" for those not decided on yet).
	HeldByRule map[string]int `json:"heldByRule"`
	// Placed counts the bindings placed on a member.
	Placed int               `json:"placed"`
	Denied map[string]string `json:"denied,omitempty"`
}

// Member is a member cluster as Karmada reports it.
type Member struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// Condition is the reason and message of its Ready condition ("" when
	// Karmada has not reported one).
	Condition  string `json:"condition,omitempty"`
	Region     string `json:"region,omitempty"`
	Nodes      int32  `json:"nodes"`
	ReadyNodes int32  `json:"readyNodes"`
	// Resources are what it has allocatable and what is allocated, from
	// Karmada's resource summary.
	Resources []Usage `json:"resources"`
	// Bindings counts the bindings placed on it.
	Bindings int `json:"bindings"`
	// Taints are its taints, as key=value:effect.
	Taints []string `json:"taints,omitempty"`
}

// HeldBinding is a binding caldera-global holds, and why.
type HeldBinding struct {
	Namespace string `json:"namespace"`
	// Name is the binding's; Kind and Workload its workload's.
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Workload string `json:"workload"`
	Queue    string `json:"queue,omitempty"`
	// HeldSince is when caldera-global first held it (nil: not marked
	// yet); Waiting how long ago that was, as kubectl writes an age.
	HeldSince *time.Time `json:"heldSince,omitempty"`
	Waiting   string     `json:"waiting,omitempty"`
	// Rule and Reason are the latest reason caldera-global gave; both ""
	// when it has given none yet.
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// heldPrefix starts the message of every hold event caldera-global records.
const heldPrefix = "held: "

// holdRules are the reasons of the events that say why work is held.
var holdRules = map[string]bool{
	string(dispatch.RuleQueueNotFound): true, string(dispatch.RuleQueueClosed): true, string(dispatch.RuleCapability): true,
	string(dispatch.RuleGuarantee): true, string(dispatch.RuleNoClusterFits): true, string(dispatch.RuleReserved): true,
	string(dispatch.RuleNoReadyCluster): true, string(dispatch.RuleGang): true, string(dispatch.RuleData): true,
}

func buildFederation(in *FederationInput, now time.Time) Federation {
	if in == nil {
		return Federation{Members: []Member{}, Held: []HeldBinding{}, HeldByRule: map[string]int{}}
	}
	f := Federation{Enabled: true, Host: in.Host, Members: []Member{}, Held: []HeldBinding{}, HeldByRule: map[string]int{}, Denied: in.Denied}
	placed := map[string]int{}
	for _, rb := range in.Bindings {
		if len(rb.Spec.Clusters) > 0 {
			f.Placed++
		}
		for _, c := range rb.Spec.Clusters {
			placed[c.Name]++
		}
	}
	for _, c := range in.Clusters {
		f.Members = append(f.Members, member(c, placed[c.Name]))
	}
	slices.SortFunc(f.Members, func(a, b Member) int { return cmp.Compare(a.Name, b.Name) })

	reasons := latestHolds(in.Events)
	for _, rb := range in.Bindings {
		if !held(rb) {
			continue
		}
		ref := rb.Spec.Resource
		h := HeldBinding{Namespace: rb.Namespace, Name: rb.Name, Kind: ref.Kind, Workload: ref.Name,
			Queue: rb.Annotations[dispatch.QueueOfBindingAnnotation]}
		if at, err := time.Parse(time.RFC3339, rb.Annotations[dispatch.HeldSinceAnnotation]); err == nil {
			h.HeldSince = &at
			h.Waiting = duration.HumanDuration(now.Sub(at))
		}
		if e, ok := reasons[holdKey{ref.Kind, ref.Namespace, ref.Name}]; ok && (ref.UID == "" || e.InvolvedObject.UID == "" || string(e.InvolvedObject.UID) == ref.UID) {
			h.Rule, h.Reason = e.Reason, strings.TrimPrefix(e.Message, heldPrefix)
		}
		f.HeldByRule[h.Rule]++
		f.Held = append(f.Held, h)
	}
	slices.SortFunc(f.Held, func(a, b HeldBinding) int {
		switch {
		case a.HeldSince == nil && b.HeldSince != nil:
			return 1
		case a.HeldSince != nil && b.HeldSince == nil:
			return -1
		case a.HeldSince != nil:
			if c := a.HeldSince.Compare(*b.HeldSince); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return f
}

// held reports whether caldera-global holds a binding: its scheduling is
// suspended (so Karmada's scheduler leaves it alone) and no cluster is
// chosen. A binding caldera-global placed keeps the suspension, with the
// cluster it chose.
func held(rb *workv1alpha2.ResourceBinding) bool {
	return rb.Spec.SchedulingSuspended() && len(rb.Spec.Clusters) == 0
}

func member(c *clusterv1alpha1.Cluster, bindings int) Member {
	m := Member{Name: c.Name, Region: c.Spec.Region, Bindings: bindings, Resources: []Usage{}}
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		m.Ready = cond.Status == metav1.ConditionTrue
		m.Condition = strings.TrimSpace(cond.Reason + ": " + cond.Message)
		if cond.Message == "" {
			m.Condition = cond.Reason
		}
	}
	if n := c.Status.NodeSummary; n != nil {
		m.Nodes, m.ReadyNodes = n.TotalNum, n.ReadyNum
	}
	if s := c.Status.ResourceSummary; s != nil {
		m.Resources = usage(amountsOf(s.Allocatable), amountsOf(s.Allocated))
	}
	for _, t := range c.Spec.Taints {
		m.Taints = append(m.Taints, t.ToString())
	}
	return m
}

// holdKey names the workload an event is about.
type holdKey struct{ kind, namespace, name string }

// latestHolds returns, per workload, the latest event in which
// caldera-global said why it holds it.
func latestHolds(events []*corev1.Event) map[holdKey]*corev1.Event {
	out := map[holdKey]*corev1.Event{}
	for _, e := range events {
		if !holdRules[e.Reason] || !strings.HasPrefix(e.Message, heldPrefix) {
			continue
		}
		k := holdKey{e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name}
		if prev, ok := out[k]; !ok || eventTime(e).After(eventTime(prev)) {
			out[k] = e
		}
	}
	return out
}

// eventTime is when an event was last seen, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
