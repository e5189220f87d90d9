// Package fedenv brings up, for the e2e and chaos suites, a federation on
// this machine: member clusters (pkg/localenv), a Karmada control plane
// whose controllers a stand-in plays (StandIn), and caldera-global. The
// opt-in real-Karmada tier of test/e2e replaces the stand-in with Karmada
// built from its source.
package fedenv
