// Package podgroup admits scheduling.volcano.sh/v1beta1 PodGroups: it fills
// in the queue (from the namespace's scheduling.volcano.sh/queue-name
// annotation, else "default") and the other defaults, and refuses a PodGroup
// whose spec is invalid, whose queue cannot take work or whose PriorityClass
// does not exist.
package podgroup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedulingvalidation "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/priorityclass"
	"github.com/caldera-sh/caldera/pkg/webhooks/queueref"
)

var groupKind = schedulingv1beta1.SchemeGroupVersion.WithKind("PodGroup").GroupKind()

// Webhook defaults and validates PodGroups.
type Webhook struct {
	reader lookup.Reader
}

var (
	_ admission.Defaulter[*schedulingv1beta1.PodGroup] = &Webhook{}
	_ admission.Validator[*schedulingv1beta1.PodGroup] = &Webhook{}
)

// NewWebhook returns the PodGroup webhook.
func NewWebhook(reader lookup.Reader) *Webhook {
	return &Webhook{reader: reader}
}

// Default applies the PodGroup defaults for the PodGroup's namespace. It runs
// on update too, where it changes nothing a create did not already set.
func (w *Webhook) Default(ctx context.Context, pg *schedulingv1beta1.PodGroup) error {
	return w.setDefaults(ctx, pg)
}

func (w *Webhook) setDefaults(ctx context.Context, pg *schedulingv1beta1.PodGroup) error {
	var annotations map[string]string
	if pg.Spec.Queue == "" {
		var ns corev1.Namespace
		switch err := w.reader.Get(ctx, client.ObjectKey{Name: pg.Namespace}, &ns); {
		case err == nil:
			annotations = ns.Annotations
		case !apierrors.IsNotFound(err):
			return admit.Internal("reading the PodGroup's namespace for its default queue", err)
		}
	}
	schedulingv1beta1.SetPodGroupDefaultsInNamespace(pg, annotations)
	return nil
}

// ValidateCreate checks a new PodGroup, including its queue.
func (w *Webhook) ValidateCreate(ctx context.Context, pg *schedulingv1beta1.PodGroup) (admission.Warnings, error) {
	pg = pg.DeepCopy()
	if err := w.setDefaults(ctx, pg); err != nil {
		return nil, err
	}
	errs := schedulingvalidation.ValidatePodGroup(pg)
	refErrs, err := w.checkReferences(ctx, pg, true, true)
	if err != nil {
		return nil, err
	}
	return nil, admit.Invalid(groupKind, pg.Name, append(errs, refErrs...))
}

// ValidateUpdate checks a changed PodGroup. Its queue and PriorityClass are
// checked only when they change, so that closing a queue does not stop the
// controllers from updating the PodGroups already in it.
func (w *Webhook) ValidateUpdate(ctx context.Context, oldPG, newPG *schedulingv1beta1.PodGroup) (admission.Warnings, error) {
	newPG = newPG.DeepCopy()
	if err := w.setDefaults(ctx, newPG); err != nil {
		return nil, err
	}
	errs := schedulingvalidation.ValidatePodGroup(newPG)
	refErrs, err := w.checkReferences(ctx, newPG,
		newPG.Spec.Queue != oldPG.Spec.Queue,
		newPG.Spec.PriorityClassName != oldPG.Spec.PriorityClassName)
	if err != nil {
		return nil, err
	}
	return nil, admit.Invalid(groupKind, newPG.Name, append(errs, refErrs...))
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *schedulingv1beta1.PodGroup) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) checkReferences(ctx context.Context, pg *schedulingv1beta1.PodGroup, queue, priorityClass bool) (field.ErrorList, error) {
	if !queue && !priorityClass {
		return nil, nil
	}
	specPath := field.NewPath("spec")
	errs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
		var errs field.ErrorList
		if queue {
			problem, err := queueref.Problem(ctx, c, pg.Spec.Queue)
			if err != nil {
				return nil, err
			}
			if problem != "" {
				errs = append(errs, field.Invalid(specPath.Child("queue"), pg.Spec.Queue, problem))
			}
		}
		if priorityClass {
			pcErrs, err := priorityclass.Validate(ctx, c, pg.Spec.PriorityClassName, specPath.Child("priorityClassName"))
			if err != nil {
				return nil, err
			}
			errs = append(errs, pcErrs...)
		}
		return errs, nil
	})
	if err != nil {
		return nil, admit.Internal("checking the PodGroup's queue and PriorityClass", err)
	}
	return errs, nil
}
