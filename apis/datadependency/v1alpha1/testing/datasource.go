// Package testing builds datadependency.volcano.sh objects for tests.
package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

// DataSourceWrapper builds a DataSource.
type DataSourceWrapper struct{ ds ddv1alpha1.DataSource }

// MakeDataSource returns a DataSource for the given system, type and name of
// data, local to no cluster yet.
func MakeDataSource(name, system, dataType, dataName string) *DataSourceWrapper {
	return &DataSourceWrapper{ds: ddv1alpha1.DataSource{
		TypeMeta: metav1.TypeMeta{
			APIVersion: ddv1alpha1.SchemeGroupVersion.String(),
			Kind:       "DataSource",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ddv1alpha1.DataSourceSpec{
			System:   system,
			Type:     dataType,
			Name:     dataName,
			Locality: &ddv1alpha1.DataSourceLocality{},
		},
	}}
}

// Obj returns a copy of the built DataSource.
func (w *DataSourceWrapper) Obj() *ddv1alpha1.DataSource { return w.ds.DeepCopy() }

// Clusters sets the clusters the data is local to.
func (w *DataSourceWrapper) Clusters(names ...string) *DataSourceWrapper {
	w.ds.Spec.Locality = &ddv1alpha1.DataSourceLocality{ClusterNames: names}
	return w
}

// NoLocality removes the locality.
func (w *DataSourceWrapper) NoLocality() *DataSourceWrapper {
	w.ds.Spec.Locality = nil
	return w
}

// Attribute sets one attribute.
func (w *DataSourceWrapper) Attribute(key, value string) *DataSourceWrapper {
	if w.ds.Spec.Attributes == nil {
		w.ds.Spec.Attributes = map[string]string{}
	}
	w.ds.Spec.Attributes[key] = value
	return w
}

// ReclaimPolicy sets the reclaim policy.
func (w *DataSourceWrapper) ReclaimPolicy(p ddv1alpha1.DataSourceReclaimPolicy) *DataSourceWrapper {
	w.ds.Spec.ReclaimPolicy = p
	return w
}

// TTLSecondsAfterUnbound sets how long an unbound DataSource is kept.
func (w *DataSourceWrapper) TTLSecondsAfterUnbound(s int32) *DataSourceWrapper {
	w.ds.Spec.TTLSecondsAfterUnbound = &s
	return w
}
