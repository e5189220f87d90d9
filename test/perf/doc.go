// Package perf is the scheduler benchmark: workloads declared as data in
// workloads/*.yaml (nodes, jobs, mode, and a small and a large size in one
// file) are run against caldera-scheduler and kube-scheduler, one after the
// other on the same simulated cluster, and each run reports pods bound per
// second, job latency percentiles, API writes per pod (from kube-apiserver's
// audit log), CPU time and peak memory. The tests that run it carry the
// perf build tag; docs/performance.md says how to run it and what the
// numbers mean.
package perf
