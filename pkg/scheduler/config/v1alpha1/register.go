package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the scheduler's component configuration.
const GroupName = "scheduler.config.caldera.sh"

// Kind is the kind of the configuration document.
const Kind = "SchedulerConfiguration"

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// AddToScheme registers SchedulerConfiguration with a scheme, for callers
// that print or encode the configuration through apimachinery.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &SchedulerConfiguration{})
	return nil
}
