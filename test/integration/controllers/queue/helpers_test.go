//go:build integration

package queue

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func createQueue(t *testing.T, name, parent string) {
	t.Helper()
	create(t, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{Parent: parent}})
}

func getQueue(t *testing.T, name string) *schedulingv1beta1.Queue {
	t.Helper()
	q := &schedulingv1beta1.Queue{}
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, q); err != nil {
		t.Fatal(err)
	}
	return q
}

// waitState waits until a queue shows the state and closed-by-parent mark
// ("" for none).
func waitState(t *testing.T, name string, state schedulingv1beta1.QueueState, mark string) {
	t.Helper()
	poll.Eventually(t, t.Context(), 30*time.Second, fmt.Sprintf("queue %s %s with mark %q", name, state, mark), func() (bool, string) {
		q := &schedulingv1beta1.Queue{}
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, q); err != nil {
			return false, err.Error()
		}
		got := q.Annotations[schedulingv1beta1.ClosedByParentAnnotation]
		return q.Status.State == state && got == mark, fmt.Sprintf("%s, mark %q", q.Status.State, got)
	})
}

// command issues a Command for a queue, as vcctl does, and waits until the
// controller has executed and deleted it.
func command(t *testing.T, action busv1alpha1.Action, queue string) {
	t.Helper()
	q := getQueue(t, queue)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}
	if err := fw.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	cmd := &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", GenerateName: queue + "-"},
		Action:     string(action),
		TargetObject: &metav1.OwnerReference{
			APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Queue", Name: queue, UID: q.UID,
		},
	}
	create(t, cmd)
	poll.Eventually(t, t.Context(), 30*time.Second, fmt.Sprintf("command %s deleted", cmd.Name), func() (bool, string) {
		err := fw.Client.Get(t.Context(), types.NamespacedName{Namespace: "ops", Name: cmd.Name}, &busv1alpha1.Command{})
		return err != nil && client.IgnoreNotFound(err) == nil, fmt.Sprint(err)
	})
}
