// Package testing holds fluent builders of the objects scheduler tests
// use: pods (for the volcano scheduler, with requests, groups, affinity,
// spread, ports, tolerations and claims), nodes (with zones, taints and
// images), claims, volumes and storage classes, one file per kind:
// MakePod("ns", "p").Req("cpu", "1").Obj().
//
// It imports no scheduler package, so that the scheduler's own packages
// (and pkg/topology) can use it in their tests.
package testing
