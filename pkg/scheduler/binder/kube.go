package binder

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeBinder posts Bindings to the API server.
type KubeBinder struct {
	Client kubernetes.Interface
}

// Bind posts the binding to the pod's binding subresource.
func (k KubeBinder) Bind(ctx context.Context, b *corev1.Binding) error {
	return k.Client.CoreV1().Pods(b.Namespace).Bind(ctx, b, metav1.CreateOptions{})
}
