// Package podtemplate validates the pod templates embedded in Caldera's
// workloads (a Job's tasks, a HyperJob's job templates) with the API server's
// own pod validation, so that a template the job controller could never turn
// into a pod is refused when the workload is created rather than when its
// first pod is.
package podtemplate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// Validate checks a pod template as the API server checks the pod template of
// a Deployment or a batch Job, reporting errors under fldPath. The template
// is defaulted first, as the API server defaults pods.
//
// Privileged containers are not judged: whether they are allowed is a flag of
// the API server (--allow-privileged) that the webhook cannot see, and the
// API server checks it when the pods are created.
func Validate(template *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	v1Template := &corev1.PodTemplate{Template: *template.DeepCopy()}
	k8scorev1.SetObjectDefaults_PodTemplate(v1Template)
	for _, containers := range [][]corev1.Container{v1Template.Template.Spec.InitContainers, v1Template.Template.Spec.Containers} {
		for i := range containers {
			if sc := containers[i].SecurityContext; sc != nil {
				sc.Privileged = nil
			}
		}
	}
	var coreTemplate api.PodTemplateSpec
	if err := k8scorev1.Convert_v1_PodTemplateSpec_To_core_PodTemplateSpec(&v1Template.Template, &coreTemplate, nil); err != nil {
		return field.ErrorList{field.InternalError(fldPath, fmt.Errorf("converting the pod template: %w", err))}
	}
	opts := podutil.GetValidationOptionsFromPodTemplate(&coreTemplate, nil)
	return corevalidation.ValidatePodTemplateSpec(&coreTemplate, fldPath, opts)
}
