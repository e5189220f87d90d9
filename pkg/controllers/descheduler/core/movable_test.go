package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnmovable(t *testing.T) {
	yes := true
	owned := func(kind string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: "x", Controller: &yes}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	with := func(p *corev1.Pod, f func(*corev1.Pod)) *corev1.Pod { f(p); return p }
	critical := int32(2_000_000_000)
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		gangMin int32
		want    string
	}{
		{name: "a ReplicaSet's running pod", pod: owned("ReplicaSet")},
		{name: "a one-pod PodGroup is no gang", pod: owned("Job"), gangMin: 1},
		{name: "a gang member", pod: owned("Job"), gangMin: 4, want: "gang member (minMember 4)"},
		{name: "pending", pod: with(owned("ReplicaSet"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }), want: "not running"},
		{name: "bare pod", pod: with(owned("ReplicaSet"), func(p *corev1.Pod) { p.OwnerReferences = nil }), want: "no controller to recreate it"},
		{name: "DaemonSet", pod: owned("DaemonSet"), want: "DaemonSet pod"},
		{name: "static", pod: with(owned("Node"), func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorAnnotation: "x"} }), want: "static pod"},
		{name: "system-critical", pod: with(owned("ReplicaSet"), func(p *corev1.Pod) { p.Spec.Priority = &critical }), want: "system-critical"},
		{name: "emptyDir", pod: with(owned("ReplicaSet"), func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}), want: "keeps data on the node (emptyDir or hostPath)"},
	} {
		if got := Unmovable(tc.pod, tc.gangMin); got != tc.want {
			t.Errorf("%s: Unmovable = %q, want %q", tc.name, got, tc.want)
		}
	}
}
