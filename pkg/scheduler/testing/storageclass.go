package testing

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageClassWrapper builds a StorageClass.
type StorageClassWrapper struct {
	storagev1.StorageClass
}

// MakeStorageClass starts a class with the given provisioner that binds
// immediately.
func MakeStorageClass(name, provisioner string) *StorageClassWrapper {
	mode := storagev1.VolumeBindingImmediate
	return &StorageClassWrapper{storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       provisioner,
		VolumeBindingMode: &mode,
	}}
}

// Obj returns the built class.
func (s *StorageClassWrapper) Obj() *storagev1.StorageClass { return &s.StorageClass }

// WaitForFirstConsumer delays binding until a pod using the claim is
// scheduled.
func (s *StorageClassWrapper) WaitForFirstConsumer() *StorageClassWrapper {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	s.VolumeBindingMode = &mode
	return s
}

// AllowedTopology restricts provisioning to nodes labelled key in values.
func (s *StorageClassWrapper) AllowedTopology(key string, values ...string) *StorageClassWrapper {
	s.AllowedTopologies = append(s.AllowedTopologies, corev1.TopologySelectorTerm{
		MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: key, Values: values}},
	})
	return s
}
