// Package framework is the skeleton of a scheduling cycle: the extension
// points plugins implement, the Session that runs one cycle over a snapshot
// and combines plugin answers tier by tier, and the Statement that makes a
// gang's placement a transaction. It imports no client: actions and plugins
// decide, and the shell applies what the session records.
//
// Combining answers follows Volcano's tiers, so that a Volcano configuration
// means the same here: orderings ask tier by tier and the first plugin with
// an opinion decides; vetoes (predicates, allocatable, job valid, job ready)
// need every enabled plugin to agree; votes (pipelined, enqueueable) are
// decided by the first tier where some plugin votes, a rejection winning.
package framework
