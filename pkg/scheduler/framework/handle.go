package framework

// Handle carries the scheduler's long-lived services to plugin factories.
// Plugins keep what they need from it; per-cycle state lives in the plugin
// between OnSessionOpen and OnSessionClose or in the session's cycle state,
// never here.
type Handle struct {
	// PodFit runs kube-scheduler's filter and score plugins; nil when the
	// configuration has neither predicates nor nodeorder.
	PodFit PodFit
	// Hierarchy is the plugin's enableHierarchy switch: queues hang under
	// their spec.parent (each plugin's factory gets its own copy of the
	// handle with its switch).
	Hierarchy bool
}
