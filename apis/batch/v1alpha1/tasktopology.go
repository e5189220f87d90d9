package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
)

// Job annotations that tell the scheduler's task-topology plugin which of a
// job's tasks should share nodes and which should not. The job controller
// copies them onto the job's PodGroup, where the scheduler reads them.
const (
	// TaskTopologyAffinityKey lists groups of tasks whose pods should run
	// on the same nodes: groups separated by ";", task names within a group
	// by ",". "ps,worker;ps,evaluator" puts workers and evaluators next to
	// parameter servers.
	TaskTopologyAffinityKey = "volcano.sh/task-topology-affinity"
	// TaskTopologyAntiAffinityKey lists groups of tasks whose pods should
	// run on different nodes, in the same form. A group of one task spreads
	// that task's own pods: "ps" keeps parameter servers apart.
	TaskTopologyAntiAffinityKey = "volcano.sh/task-topology-anti-affinity"
	// TaskTopologyTaskOrderKey lists task names, separated by ",", in the
	// order the scheduler places their pods; tasks not listed come after.
	TaskTopologyTaskOrderKey = "volcano.sh/task-topology-task-order"
)

// TaskTopology is what a job's task-topology annotations say.
//
// +kubebuilder:object:generate=false
type TaskTopology struct {
	// Affinity and AntiAffinity are the annotations' groups, in order,
	// with blanks trimmed and empty groups (a trailing ";") dropped.
	Affinity     [][]string
	AntiAffinity [][]string
	// Order is the task-order annotation's task names.
	Order []string
}

// IsEmpty reports whether the annotations relate no tasks and order none.
func (t *TaskTopology) IsEmpty() bool {
	return t == nil || len(t.Affinity) == 0 && len(t.AntiAffinity) == 0 && len(t.Order) == 0
}

// ParseTaskTopology reads the task-topology annotations; nil when there
// are none. An error names the annotation and what is wrong with it.
func ParseTaskTopology(annotations map[string]string) (*TaskTopology, error) {
	aff, hasAff := annotations[TaskTopologyAffinityKey]
	anti, hasAnti := annotations[TaskTopologyAntiAffinityKey]
	order, hasOrder := annotations[TaskTopologyTaskOrderKey]
	if !hasAff && !hasAnti && !hasOrder {
		return nil, nil
	}
	t := &TaskTopology{}
	var err error
	if t.Affinity, err = parseGroups(TaskTopologyAffinityKey, aff); err != nil {
		return nil, err
	}
	if t.AntiAffinity, err = parseGroups(TaskTopologyAntiAffinityKey, anti); err != nil {
		return nil, err
	}
	if strings.TrimSpace(order) != "" {
		if t.Order, err = parseNames(TaskTopologyTaskOrderKey, order); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, name := range t.Order {
			if seen[name] {
				return nil, fmt.Errorf("annotation %s: task %q is listed twice", TaskTopologyTaskOrderKey, name)
			}
			seen[name] = true
		}
	}
	return t, nil
}

// parseGroups splits "a,b;c" into groups of task names.
func parseGroups(key, value string) ([][]string, error) {
	var out [][]string
	for g := range strings.SplitSeq(value, ";") {
		if strings.TrimSpace(g) == "" {
			continue
		}
		names, err := parseNames(key, g)
		if err != nil {
			return nil, err
		}
		slices.Sort(names)
		out = append(out, slices.Compact(names))
	}
	return out, nil
}

// parseNames splits "a, b" into task names, refusing empty ones.
func parseNames(key, value string) ([]string, error) {
	var out []string
	for n := range strings.SplitSeq(value, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("annotation %s: %q has an empty task name (separate names by \",\" and groups by \";\")", key, value)
		}
		out = append(out, n)
	}
	return out, nil
}
