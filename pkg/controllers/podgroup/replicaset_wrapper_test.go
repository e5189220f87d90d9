package podgroup

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// replicaSetWrapper builds a ReplicaSet.
type replicaSetWrapper struct{ appsv1.ReplicaSet }

// makeReplicaSet starts a ReplicaSet of one replica with UID "uid-<name>".
func makeReplicaSet(namespace, name string) *replicaSetWrapper {
	return &replicaSetWrapper{appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)},
		Spec:       appsv1.ReplicaSetSpec{Replicas: new(int32(1))},
	}}
}

func (rs *replicaSetWrapper) Obj() *appsv1.ReplicaSet { return &rs.ReplicaSet }

// Annotation sets an annotation.
func (rs *replicaSetWrapper) Annotation(k, v string) *replicaSetWrapper {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	rs.Annotations[k] = v
	return rs
}

// Replicas sets spec.replicas.
func (rs *replicaSetWrapper) Replicas(n int32) *replicaSetWrapper {
	rs.Spec.Replicas = new(n)
	return rs
}

// Owns makes the ReplicaSet the controller of a pod.
func (rs *replicaSetWrapper) Owns(p *st.PodWrapper) *st.PodWrapper {
	return p.ControlledBy("apps/v1", "ReplicaSet", rs.Name, rs.UID)
}
