// Package v1alpha1 mirrors Karmada's config.karmada.io/v1alpha1
// ResourceInterpreterCustomization: Lua scripts that teach Karmada a
// resource kind's replicas, requirements, status and health. Caldera ships
// them for Volcano's Job, Queue and HyperJob.
//
// +kubebuilder:object:generate=true
// +groupName=config.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceInterpreterCustomization customizes Karmada's view of a kind.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=ric
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec names the kind and its scripts.
type ResourceInterpreterCustomizationSpec struct {
	// +required
	Target CustomizationTarget `json:"target"`
	// +required
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget is the kind customized.
type CustomizationTarget struct {
	// +required
	APIVersion string `json:"apiVersion"`
	// +required
	Kind string `json:"kind"`
}

// CustomizationRules are the scripts, each optional.
type CustomizationRules struct {
	// Retention: function Retain(desiredObj, observedObj).
	// +optional
	Retention *LocalValueRetention `json:"retention,omitempty"`
	// ReplicaResource: function GetReplicas(desiredObj) returning the
	// replicas and one replica's requirements.
	// +optional
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`
	// ComponentResource: function GetComponents(desiredObj) returning the
	// workload's components (name, replicas, replicaRequirements), used by
	// Karmada instead of GetReplicas when its MultiplePodTemplatesScheduling
	// feature gate is on.
	// +optional
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`
	// ReplicaRevision: function ReviseReplica(desiredObj, desiredReplica).
	// +optional
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`
	// StatusReflection: function ReflectStatus(observedObj).
	// +optional
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`
	// StatusAggregation: function AggregateStatus(desiredObj, statusItems).
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`
	// HealthInterpretation: function InterpretHealth(observedObj).
	// +optional
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`
	// DependencyInterpretation: function GetDependencies(desiredObj).
	// +optional
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`
}

// Each rule is a Lua script.
type (
	// LocalValueRetention retains member-side values.
	LocalValueRetention struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// ReplicaResourceRequirement reads replicas and requirements.
	ReplicaResourceRequirement struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// ComponentResourceRequirement reads the components.
	ComponentResourceRequirement struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// ReplicaRevision sets replicas.
	ReplicaRevision struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// StatusReflection reads a member's status.
	StatusReflection struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// StatusAggregation merges members' statuses.
	StatusAggregation struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// HealthInterpretation says whether the object is healthy.
	HealthInterpretation struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
	// DependencyInterpretation lists what the object depends on.
	DependencyInterpretation struct {
		// +required
		LuaScript string `json:"luaScript"`
	}
)

// ResourceInterpreterCustomizationList is a list of customizations.
//
// +kubebuilder:object:root=true
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceInterpreterCustomization `json:"items"`
}
