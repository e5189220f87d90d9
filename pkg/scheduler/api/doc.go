// Package api is the scheduler's model of a cluster at one instant: nodes,
// jobs (PodGroups) with their tasks (pods), and queues, with the resource
// arithmetic decisions need. It imports no client: the cache builds it from
// informers, the simulator builds it from a scenario, and every decision
// core reads and changes only these types.
package api
