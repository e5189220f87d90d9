package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PVCWrapper builds a PersistentVolumeClaim.
type PVCWrapper struct {
	corev1.PersistentVolumeClaim
}

// MakePVC starts a ReadWriteOnce claim of 1Gi.
func MakePVC(namespace, name string) *PVCWrapper {
	return &PVCWrapper{corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("pvc-" + namespace + "/" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}}
}

// Obj returns the built claim.
func (c *PVCWrapper) Obj() *corev1.PersistentVolumeClaim { return &c.PersistentVolumeClaim }

// StorageClass sets spec.storageClassName.
func (c *PVCWrapper) StorageClass(name string) *PVCWrapper {
	c.Spec.StorageClassName = &name
	return c
}

// AccessMode replaces the access modes.
func (c *PVCWrapper) AccessMode(mode corev1.PersistentVolumeAccessMode) *PVCWrapper {
	c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{mode}
	return c
}

// Bound marks the claim bound to the volume, as the volume controller
// leaves it.
func (c *PVCWrapper) Bound(volume string) *PVCWrapper {
	c.Spec.VolumeName = volume
	c.Status.Phase = corev1.ClaimBound
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
	return c
}
