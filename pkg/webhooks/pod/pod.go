// Package pod admits the creation of pods that one of Caldera's schedulers
// places. As in Volcano it checks that the pod's queue takes work: the queue
// of the PodGroup named by the pod's scheduling.k8s.io/group-name annotation
// (which must exist), or else the queue named by its
// scheduling.volcano.sh/queue-name annotation. A pod with neither is not
// checked here: the PodGroup made for it is, when it is created. It also
// checks the job disruption budget annotations. It changes nothing.
package pod

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/queueref"
)

var groupKind = corev1.SchemeGroupVersion.WithKind("Pod").GroupKind()

// Webhook validates the creation of pods of the given schedulers.
type Webhook struct {
	reader     lookup.Reader
	schedulers sets.Set[string]
}

var _ admission.Validator[*corev1.Pod] = &Webhook{}

// NewWebhook returns the pod webhook for pods whose spec.schedulerName is one
// of schedulers; other pods are let through untouched.
func NewWebhook(reader lookup.Reader, schedulers []string) *Webhook {
	return &Webhook{reader: reader, schedulers: sets.New(schedulers...)}
}

// ValidateCreate checks a new pod.
func (w *Webhook) ValidateCreate(ctx context.Context, pod *corev1.Pod) (admission.Warnings, error) {
	if !w.schedulers.Has(pod.Spec.SchedulerName) {
		return nil, nil
	}
	errs := ValidateBudgetAnnotations(pod.Annotations, field.NewPath("metadata", "annotations"))
	errs = append(errs, ValidatePreemptionKeys(pod.Annotations, field.NewPath("metadata", "annotations"))...)
	errs = append(errs, ValidatePreemptionKeys(pod.Labels, field.NewPath("metadata", "labels"))...)
	errs = append(errs, ValidateGPURequests(&pod.Spec, field.NewPath("spec"))...)
	queueErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
		return validateQueue(ctx, c, pod)
	})
	if err != nil {
		return nil, admit.Internal("checking the pod's queue", err)
	}
	return nil, admit.Invalid(groupKind, pod.Name, append(errs, queueErrs...))
}

// ValidateUpdate allows updates; the webhook is not registered for them.
func (w *Webhook) ValidateUpdate(context.Context, *corev1.Pod, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

func validateQueue(ctx context.Context, c client.Reader, pod *corev1.Pod) (field.ErrorList, error) {
	annotationsPath := field.NewPath("metadata", "annotations")
	for _, key := range []string{schedulingv1beta1.KubeGroupNameAnnotation, schedulingv1beta1.GroupNameAnnotation} {
		group := pod.Annotations[key]
		if group == "" {
			continue
		}
		fldPath := annotationsPath.Key(key)
		var pg schedulingv1beta1.PodGroup
		err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: group}, &pg)
		if apierrors.IsNotFound(err) {
			return field.ErrorList{field.Invalid(fldPath, group, "PodGroup does not exist in namespace "+pod.Namespace)}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading PodGroup %s/%s: %w", pod.Namespace, group, err)
		}
		queue := pg.Spec.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		problem, err := queueref.Problem(ctx, c, queue)
		if err != nil || problem == "" {
			return nil, err
		}
		return field.ErrorList{field.Invalid(fldPath, group, fmt.Sprintf("the PodGroup's queue %q: %s", queue, problem))}, nil
	}
	if queue := pod.Annotations[schedulingv1beta1.QueueNameAnnotation]; queue != "" {
		problem, err := queueref.Problem(ctx, c, queue)
		if err != nil || problem == "" {
			return nil, err
		}
		return field.ErrorList{field.Invalid(annotationsPath.Key(schedulingv1beta1.QueueNameAnnotation), queue, problem)}, nil
	}
	return nil, nil
}

// budgetKeys are the job disruption budget annotations; a pod may set one.
var budgetKeys = []string{schedulingv1beta1.JDBMinAvailableKey, schedulingv1beta1.JDBMaxUnavailableKey}

// ValidateBudgetAnnotations checks the job disruption budget annotations: at
// most one of them, each a positive integer or a percentage from 1% to 99%.
func ValidateBudgetAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	for _, key := range budgetKeys {
		value, ok := annotations[key]
		if !ok {
			continue
		}
		set = append(set, key)
		if msg := budgetProblem(value); msg != "" {
			errs = append(errs, field.Invalid(fldPath.Key(key), value, msg))
		}
	}
	if len(set) > 1 {
		errs = append(errs, field.Forbidden(fldPath.Key(set[1]),
			fmt.Sprintf("must not be set together with %s: a pod has one disruption budget", set[0])))
	}
	return errs
}

func budgetProblem(value string) string {
	if number, ok := strings.CutSuffix(value, "%"); ok {
		if p, err := strconv.Atoi(number); err != nil || p < 1 || p > 99 {
			return "must be a positive integer or a percentage from 1% to 99%"
		}
		return ""
	}
	if n, err := strconv.Atoi(value); err != nil || n < 1 {
		return "must be a positive integer or a percentage from 1% to 99%"
	}
	return ""
}

// ValidatePreemptionKeys checks the keys that protect a pod from
// preemption and reclaim, as labels or annotations: volcano.sh/preemptable
// must be true or false, volcano.sh/cooldown-time a positive duration. A
// typo would otherwise leave a pod its owner meant to protect unprotected.
func ValidatePreemptionKeys(values map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := values[schedulingv1beta1.PreemptableKey]; ok {
		if _, err := strconv.ParseBool(v); err != nil {
			errs = append(errs, field.Invalid(fldPath.Key(schedulingv1beta1.PreemptableKey), v, "must be true or false"))
		}
	}
	if v, ok := values[schedulingv1beta1.CooldownTimeKey]; ok {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			errs = append(errs, field.Invalid(fldPath.Key(schedulingv1beta1.CooldownTimeKey), v,
				`must be a positive duration such as "600s" or "10m"`))
		}
	}
	return errs
}

// ValidateGPURequests checks a pod's GPU-sharing requests: a pod shares one
// card (volcano.sh/gpu-memory) or takes whole cards (volcano.sh/gpu-number),
// not both, which no scheduler could place. fldPath is the pod spec's.
func ValidateGPURequests(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var memory, number *field.Path
	var cards string
	for _, part := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range part.containers {
			for _, list := range []struct {
				name string
				rl   corev1.ResourceList
			}{{"limits", c.Resources.Limits}, {"requests", c.Resources.Requests}} {
				p := fldPath.Child(part.name).Index(i).Child("resources", list.name)
				if q, ok := list.rl[schedulingv1beta1.GPUMemoryResource]; ok && !q.IsZero() && memory == nil {
					memory = p.Key(string(schedulingv1beta1.GPUMemoryResource))
				}
				if q, ok := list.rl[schedulingv1beta1.GPUNumberResource]; ok && !q.IsZero() && number == nil {
					number, cards = p.Key(string(schedulingv1beta1.GPUNumberResource)), q.String()
				}
			}
		}
	}
	if memory == nil || number == nil {
		return nil
	}
	return field.ErrorList{field.Invalid(number, cards, fmt.Sprintf(
		"the pod also asks for %s (%s): a pod shares one GPU card or takes whole cards, not both", schedulingv1beta1.GPUMemoryResource, memory))}
}
