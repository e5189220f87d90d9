// Package apitest holds test doubles of the hooks package api calls out to.
package apitest

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Mirror is an api.NodeMirror that records what its NodeInfo tells it, for
// tests of what a node's mirror sees.
type Mirror struct {
	Node *corev1.Node
	Pods map[types.UID]*corev1.Pod
}

var _ api.NodeMirror = &Mirror{}

// NewMirror returns an empty Mirror, for api.Objects.NewNodeMirror.
func NewMirror() api.NodeMirror { return &Mirror{Pods: map[types.UID]*corev1.Pod{}} }

func (m *Mirror) SetNode(node *corev1.Node)                 { m.Node = node }
func (m *Mirror) AddTask(t *api.TaskInfo)                   { m.Pods[t.UID] = t.Pod }
func (m *Mirror) RemoveTask(_ klog.Logger, t *api.TaskInfo) { delete(m.Pods, t.UID) }
func (m *Mirror) Clone() api.NodeMirror                     { return &Mirror{Node: m.Node, Pods: maps.Clone(m.Pods)} }

// MirrorOf returns the node's Mirror; nil when its mirror is not one.
func MirrorOf(n *api.NodeInfo) *Mirror {
	m, _ := n.Mirror.(*Mirror)
	return m
}
