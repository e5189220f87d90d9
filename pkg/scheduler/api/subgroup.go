package api

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// SubGroupPolicy is one entry of a PodGroup's spec.subGroupPolicy with the
// sub-groups it makes of the job's tasks.
type SubGroupPolicy struct {
	Name string
	// MinSubGroups is how many of Groups must be placed whole before any
	// task of the job starts.
	MinSubGroups int32
	Groups       []*SubGroup
}

// SubGroup is a set of a job's tasks placed together: whole or not at
// all, and within one network domain when NetworkTopology is set.
type SubGroup struct {
	// Name is the policy's name and the sub-group's values of the
	// policy's matchLabelKeys: "worker/0".
	Name            string
	NetworkTopology *schedulingv1beta1.NetworkTopologySpec
	// Size is how many tasks make the sub-group whole: the policy's
	// subGroupSize, else all the tasks that share its label values.
	Size int32
	// Tasks are the sub-group's tasks, by name.
	Tasks []*TaskInfo
}

// CountIf counts the sub-group's tasks whose status satisfies ok.
func (g *SubGroup) CountIf(ok func(TaskStatus) bool) int32 {
	n := int32(0)
	for _, t := range g.Tasks {
		if ok(t.Status) {
			n++
		}
	}
	return n
}

// SubGroupsOf splits the job's tasks by its PodGroup's subGroupPolicy:
// each policy takes the tasks its labelSelector selects (all when it has
// none) that no earlier policy took, and makes a sub-group of the tasks
// with equal values of all its matchLabelKeys; a task without one of
// those labels is in no sub-group. nil when the PodGroup has no policy.
func SubGroupsOf(job *JobInfo) ([]*SubGroupPolicy, error) {
	if job.PodGroup == nil || len(job.PodGroup.Spec.SubGroupPolicy) == 0 {
		return nil, nil
	}
	tasks := make([]*TaskInfo, 0, len(job.Tasks))
	for _, t := range job.Tasks {
		tasks = append(tasks, t)
	}
	slices.SortFunc(tasks, func(a, b *TaskInfo) int { return strings.Compare(a.Name, b.Name) })
	taken := map[TaskID]bool{}
	var out []*SubGroupPolicy
	for i, spec := range job.PodGroup.Spec.SubGroupPolicy {
		sel := labels.Everything()
		if spec.LabelSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(spec.LabelSelector)
			if err != nil {
				return nil, fmt.Errorf("spec.subGroupPolicy[%d].labelSelector: %w", i, err)
			}
			sel = s
		}
		p := &SubGroupPolicy{Name: spec.Name}
		if spec.MinSubGroups != nil {
			p.MinSubGroups = *spec.MinSubGroups
		}
		byKey := map[string]*SubGroup{}
		for _, t := range tasks {
			if taken[t.UID] || t.Pod == nil || !sel.Matches(labels.Set(t.Pod.Labels)) {
				continue
			}
			values := make([]string, 0, len(spec.MatchLabelKeys))
			complete := true
			for _, k := range spec.MatchLabelKeys {
				v, ok := t.Pod.Labels[k]
				if !ok {
					complete = false
					break
				}
				values = append(values, v)
			}
			if !complete {
				continue
			}
			taken[t.UID] = true
			key := strings.Join(values, ",")
			g := byKey[key]
			if g == nil {
				name := spec.Name
				if key != "" {
					name += "/" + key
				}
				g = &SubGroup{Name: name, NetworkTopology: spec.NetworkTopology}
				if spec.SubGroupSize != nil {
					g.Size = *spec.SubGroupSize
				}
				byKey[key] = g
				p.Groups = append(p.Groups, g)
			}
			g.Tasks = append(g.Tasks, t)
		}
		for _, g := range p.Groups {
			if g.Size == 0 {
				g.Size = int32(len(g.Tasks))
			}
		}
		slices.SortFunc(p.Groups, func(a, b *SubGroup) int { return compareNatural(a.Name, b.Name) })
		out = append(out, p)
	}
	return out, nil
}

// compareNatural orders names with numbers by value: "w/2" before "w/10".
func compareNatural(a, b string) int {
	if len(a) != len(b) && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
