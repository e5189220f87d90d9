// Package testing builds the core objects podfit's tests need (pods with
// affinity, spread, ports, tolerations and claims; nodes with zones, taints
// and images; claims, volumes, storage classes), fluently:
// MakePod("ns", "p").Req("cpu", "1").Obj(). It complements
// pkg/scheduler/testing, whose argument order it follows.
package testing
