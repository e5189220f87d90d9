package v1alpha1

// SetDefaults_DataSource fills in the reclaim policy the API documents as
// default. It is idempotent.
func SetDefaults_DataSource(ds *DataSource) {
	if ds.Spec.ReclaimPolicy == "" {
		ds.Spec.ReclaimPolicy = ReclaimPolicyRetain
	}
}

// SetDefaults_DataSourceClaim makes the workload's namespace explicit: an
// empty one means the claim's own. It is idempotent.
func SetDefaults_DataSourceClaim(dsc *DataSourceClaim) {
	if dsc.Spec.Workload.Namespace == "" {
		dsc.Spec.Workload.Namespace = dsc.Namespace
	}
}
