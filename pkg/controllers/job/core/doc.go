// Package core decides what the Job controller does, as a pure function of
// a Job, its pods, its PodGroup and the Commands addressed to it: the state
// the Job moves to, the pods to create and delete, the PodGroup and plugin
// objects it needs, and its status. It imports no client; the reconciler
// applies the decision.
//
// Decisions are level-triggered: events (a pod failed, was evicted, pended
// too long; a task completed or failed; the job's gang broke) are derived
// from what is observed, not remembered, so deciding again after a crash
// gives the same answer.
package core
