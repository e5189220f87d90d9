// Package podgroup runs the PodGroup controller: it gives every pod for one
// of our schedulers that names no PodGroup a PodGroup, as Volcano's
// pg-controller does, so that Deployments, StatefulSets, ReplicaSets, batch
// Jobs and plain pods are scheduled as gangs under a queue.
//
// A pod is grouped with the other pods of its controller (the owner
// reference with controller=true) into the PodGroup "podgroup-<controller
// uid>"; a pod without a controller gets "podgroup-<pod uid>". The group's
// minMember comes from the controller's scheduling.volcano.sh/group-min-member
// annotation (1 without it). The controller creates the PodGroup, then
// annotates each member pod with scheduling.k8s.io/group-name.
//
// The pure parts (naming, parsing, the desired PodGroup) are in group.go; the
// reconciler, keyed by the group rather than by the pod, is in reconciler.go.
package podgroup
