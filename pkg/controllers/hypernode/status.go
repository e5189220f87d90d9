package hypernode

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/topology"
)

// ValidCondition is the condition the controller sets on every HyperNode:
// True when it breaks none of the tree's rules, False with the first
// problem's reason and every problem in the message otherwise (the
// scheduler then uses the tree as pkg/topology resolves it).
const ValidCondition = "Valid"

// validReason is the reason of a True Valid condition.
const validReason = "TreeConsistent"

// DesiredStatus is the status a HyperNode should show in the tree: its node
// count and its Valid condition. Conditions of other types, set by network
// discovery components, are kept; the Valid condition keeps its transition
// time while its status holds.
func DesiredStatus(hn *topologyv1alpha1.HyperNode, tree *topology.Tree, problems []topology.Problem, now metav1.Time) topologyv1alpha1.HyperNodeStatus {
	st := *hn.Status.DeepCopy()
	st.ObservedGeneration = hn.Generation
	st.NodeCount = 0
	if h := tree.ByName[hn.Name]; h != nil {
		st.NodeCount = int64(len(h.Nodes))
	}
	cond := metav1.Condition{Type: ValidCondition, Status: metav1.ConditionTrue, Reason: validReason,
		Message: "the HyperNode breaks none of the topology tree's rules", ObservedGeneration: hn.Generation}
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = fmt.Sprintf("%s: %s", p.Reason, p.Message)
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, problems[0].Reason, strings.Join(msgs, "; ")
	}
	cond.LastTransitionTime = now
	for _, c := range st.Conditions {
		if c.Type == ValidCondition && c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
	}
	kept := st.Conditions[:0]
	for _, c := range st.Conditions {
		if c.Type != ValidCondition {
			kept = append(kept, c)
		}
	}
	st.Conditions = append(kept, cond)
	return st
}

// problemsByHyperNode groups a tree's problems.
func problemsByHyperNode(tree *topology.Tree) map[string][]topology.Problem {
	out := map[string][]topology.Problem{}
	for _, p := range tree.Problems {
		out[p.HyperNode] = append(out[p.HyperNode], p)
	}
	return out
}
