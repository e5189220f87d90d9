// Package conformance keeps the scheduler's evictions away from the pods the
// cluster cannot run without: pods with a system-critical PriorityClass and
// pods in kube-system are never preemption or reclaim victims.
package conformance

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "conformance"

// The PriorityClasses Kubernetes reserves for components the cluster
// cannot work without.
const (
	systemClusterCritical = "system-cluster-critical"
	systemNodeCritical    = "system-node-critical"
)

// Plugin is the conformance plugin.
type Plugin struct{}

var (
	_ framework.PreemptablePlugin = &Plugin{}
	_ framework.ReclaimablePlugin = &Plugin{}
)

// New builds the plugin; it takes no arguments.
var New = framework.NoArgs(Name, func() framework.Plugin { return &Plugin{} })

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// Preemptable drops critical pods from the victims.
func (p *Plugin) Preemptable(_ *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	return evictable(candidates)
}

// Reclaimable drops critical pods from the victims.
func (p *Plugin) Reclaimable(_ *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	return evictable(candidates)
}

func evictable(candidates []*api.TaskInfo) []*api.TaskInfo {
	out := make([]*api.TaskInfo, 0, len(candidates))
	for _, t := range candidates {
		if !Critical(t) {
			out = append(out, t)
		}
	}
	return out
}

// Critical reports whether a task's pod must never be evicted by the
// scheduler: it runs in kube-system or has a system-critical
// PriorityClass.
func Critical(t *api.TaskInfo) bool {
	if t.Namespace == metav1.NamespaceSystem {
		return true
	}
	if t.Pod == nil {
		return false
	}
	switch t.Pod.Spec.PriorityClassName {
	case systemClusterCritical, systemNodeCritical:
		return true
	}
	return false
}
