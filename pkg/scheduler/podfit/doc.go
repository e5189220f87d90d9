// Package podfit decides what a pod's own constraints allow, exactly as
// kube-scheduler does, by running kube-scheduler's in-tree plugins over the
// scheduler's snapshot: node name, cordons, taints and tolerations, node
// affinity, host ports, resource fit, inter-pod affinity and anti-affinity,
// topology spread, volume restrictions, limits, zones and binding (with
// WaitForFirstConsumer claims), node-declared features, and the scores of
// the default profile.
//
// The plugins run in an upstream framework built from kube-scheduler's
// default configuration; they see the cycle's nodes through a lister over
// kube-scheduler NodeInfos that each api.NodeInfo keeps in step as its
// mirror (NewNodeMirror), so a pod placed tentatively on a node changes
// what the next pod of the gang may do. The Evaluator is the framework's
// PodFit: callers get framework Statuses, never kube-scheduler's types.
//
// It is the one scheduler core that needs clients: the volume plugins read
// claims, volumes and classes from an informer factory, and VolumeBinding
// binds claims in PreBind. See docs/design/podfit.md.
package podfit
