// Package command admits bus.volcano.sh/v1alpha1 Commands: a command must
// name an action the controller of its target carries out (job actions for a
// Job, OpenQueue and CloseQueue for a Queue) and a target that exists.
// Commands are one-shot: the owning controller executes and deletes them, so
// only their creation is checked.
package command

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
)

var groupKind = busv1alpha1.SchemeGroupVersion.WithKind("Command").GroupKind()

// target is a kind of object a Command may address.
type target struct {
	gk         schema.GroupKind
	namespaced bool
	actions    []string
	newObject  func() client.Object
}

// targets lists the kinds a Command may address and the actions each
// kind's controller executes.
func targets() map[string]target {
	return map[string]target{
		"Job": {
			gk:         batchv1alpha1.SchemeGroupVersion.WithKind("Job").GroupKind(),
			namespaced: true,
			actions: []string{
				string(busv1alpha1.AbortJobAction), string(busv1alpha1.CompleteJobAction),
				string(busv1alpha1.RestartJobAction), string(busv1alpha1.RestartPodAction),
				string(busv1alpha1.RestartTaskAction), string(busv1alpha1.ResumeJobAction),
				string(busv1alpha1.TerminateJobAction),
			},
			newObject: func() client.Object { return &batchv1alpha1.Job{} },
		},
		"Queue": {
			gk:        schedulingv1beta1.SchemeGroupVersion.WithKind("Queue").GroupKind(),
			actions:   []string{string(busv1alpha1.CloseQueueAction), string(busv1alpha1.OpenQueueAction)},
			newObject: func() client.Object { return &schedulingv1beta1.Queue{} },
		},
	}
}

// Webhook validates Commands.
type Webhook struct {
	reader  lookup.Reader
	targets map[string]target
}

var _ admission.Validator[*busv1alpha1.Command] = &Webhook{}

// NewWebhook returns the Command webhook.
func NewWebhook(reader lookup.Reader) *Webhook {
	return &Webhook{reader: reader, targets: targets()}
}

// ValidateCreate checks a new Command.
func (w *Webhook) ValidateCreate(ctx context.Context, cmd *busv1alpha1.Command) (admission.Warnings, error) {
	errs, t := w.validateShape(cmd)
	if len(errs) == 0 {
		refErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
			return validateTarget(ctx, c, cmd, t)
		})
		if err != nil {
			return nil, admit.Internal("checking the command's target", err)
		}
		errs = refErrs
	}
	return nil, admit.Invalid(groupKind, cmd.Name, errs)
}

// ValidateUpdate allows updates; the webhook is not registered for them.
func (w *Webhook) ValidateUpdate(context.Context, *busv1alpha1.Command, *busv1alpha1.Command) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *busv1alpha1.Command) (admission.Warnings, error) {
	return nil, nil
}

// validateShape checks the command without reading other objects and returns
// the kind of its target.
func (w *Webhook) validateShape(cmd *busv1alpha1.Command) (field.ErrorList, target) {
	var errs field.ErrorList
	actionPath, targetPath := field.NewPath("action"), field.NewPath("target")
	if cmd.Action == "" {
		errs = append(errs, field.Required(actionPath, "the action to take on the target"))
	}
	ref := cmd.TargetObject
	if ref == nil {
		return append(errs, field.Required(targetPath, "the Job or Queue the command is for")), target{}
	}
	t, ok := w.targets[ref.Kind]
	if !ok {
		return append(errs, field.NotSupported(targetPath.Child("kind"), ref.Kind, []string{"Job", "Queue"})), target{}
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != t.gk.Group {
		errs = append(errs, field.Invalid(targetPath.Child("apiVersion"), ref.APIVersion,
			fmt.Sprintf("a %s is in API group %s", ref.Kind, t.gk.Group)))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(targetPath.Child("name"), ""))
	}
	if cmd.Action != "" && !slices.Contains(t.actions, cmd.Action) {
		errs = append(errs, field.NotSupported(actionPath, cmd.Action, t.actions))
	}
	return errs, t
}

// validateTarget checks that the target exists (a Job in the command's
// namespace) and, when the command names a uid, is that object.
func validateTarget(ctx context.Context, c client.Reader, cmd *busv1alpha1.Command, t target) (field.ErrorList, error) {
	ref := cmd.TargetObject
	key := client.ObjectKey{Name: ref.Name}
	where := ""
	if t.namespaced {
		key.Namespace = cmd.Namespace
		where = " in namespace " + cmd.Namespace
	}
	obj := t.newObject()
	err := c.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return field.ErrorList{field.Invalid(field.NewPath("target", "name"), ref.Name,
			fmt.Sprintf("%s does not exist%s", ref.Kind, where))}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, key, err)
	}
	if ref.UID != "" && ref.UID != obj.GetUID() {
		return field.ErrorList{field.Invalid(field.NewPath("target", "uid"), string(ref.UID),
			fmt.Sprintf("is not the uid of %s %s (%s): the command is for an object that was deleted", ref.Kind, ref.Name, obj.GetUID()))}, nil
	}
	return nil, nil
}
