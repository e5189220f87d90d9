package v1alpha1

// Keys the HyperJob controller sets on each child job (a Volcano Job on
// the Karmada API server) and the dispatcher reads to release the children
// of one HyperJob together.
const (
	// HyperJobNameLabel names the child job's HyperJob (in its namespace).
	HyperJobNameLabel = "volcano.sh/hyperjob-name"
	// ReplicatedJobNameLabel names the replicated job the child was made
	// from.
	ReplicatedJobNameLabel = "volcano.sh/hyperjob-replicatedjob-name"
	// ChildrenAnnotation is how many children the HyperJob's current plan
	// has.
	ChildrenAnnotation = "hyperjob.caldera.sh/children"
	// MinAvailableAnnotation is how many of them must be released for any
	// to be.
	MinAvailableAnnotation = "hyperjob.caldera.sh/min-available"
	// PlanAnnotation identifies the plan the child belongs to: children of
	// an older plan are deleted, never released with a newer one's.
	PlanAnnotation = "hyperjob.caldera.sh/plan"
)
