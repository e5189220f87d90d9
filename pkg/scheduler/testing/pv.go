package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PVWrapper builds a PersistentVolume.
type PVWrapper struct {
	corev1.PersistentVolume
}

// MakePV starts an available 1Gi ReadWriteOnce local volume.
func MakePV(name string) *PVWrapper {
	return &PVWrapper{corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: "/mnt/" + name},
			},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}}
}

// Obj returns the built volume.
func (v *PVWrapper) Obj() *corev1.PersistentVolume { return &v.PersistentVolume }

// StorageClass sets spec.storageClassName.
func (v *PVWrapper) StorageClass(name string) *PVWrapper {
	v.Spec.StorageClassName = name
	return v
}

// AccessMode replaces the access modes.
func (v *PVWrapper) AccessMode(mode corev1.PersistentVolumeAccessMode) *PVWrapper {
	v.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{mode}
	return v
}

// OnNode pins the volume to nodes labelled with the hostname.
func (v *PVWrapper) OnNode(hostname string) *PVWrapper {
	v.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname},
		}}}},
	}}
	return v
}

// BoundTo marks the volume bound to the claim.
func (v *PVWrapper) BoundTo(namespace, claim string) *PVWrapper {
	v.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: namespace, Name: claim}
	v.Status.Phase = corev1.VolumeBound
	return v
}
