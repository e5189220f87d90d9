package binder

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// BoundNode reads the pod from the API server (not a cache, which may
// trail).
func (k KubeBinder) BoundNode(ctx context.Context, namespace, name string, uid types.UID) (string, bool, error) {
	p, err := k.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if p.UID != uid {
		return "", false, nil
	}
	return p.Spec.NodeName, true, nil
}
