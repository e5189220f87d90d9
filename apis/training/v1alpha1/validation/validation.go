// Package validation checks HyperJobs for what their CRD schema cannot
// express. It is pure: it reads only the object it is given.
package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchvalidation "github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// generatedSuffix stands in for the five random characters the API server
// appends to metadata.generateName, so that names can be checked before the
// object has its final name.
const generatedSuffix = "xxxxx"

// ValidateHyperJob returns the problems of a HyperJob that the API server's
// schema does not catch: child job names (<hyperjob>-<replicatedJob>-<index>)
// that are not DNS-1123 labels of at most 63 characters, templates that would
// not pass as the spec of those child jobs, cluster names no cluster can
// have, and split policies on an accelerator the template does not request.
//
// The HyperJob is expected to be defaulted (SetDefaults_HyperJob) already, as
// admission does before validating: the Volcano Job checks need named tasks
// and a queue.
func ValidateHyperJob(hj *trainingv1alpha1.HyperJob) field.ErrorList {
	var errs field.ErrorList
	prefix, prefixPath := hj.Name, field.NewPath("metadata", "name")
	if prefix == "" && hj.GenerateName != "" {
		prefix, prefixPath = hj.GenerateName+generatedSuffix, field.NewPath("metadata", "generateName")
	}
	namesChecked := prefix != ""
	if namesChecked {
		for _, msg := range validation.IsDNS1123Label(prefix) {
			errs = append(errs, field.Invalid(prefixPath, prefix, "prefixes the names of the child jobs, so it must be a DNS-1123 label: "+msg))
			namesChecked = false
		}
	}

	rjsPath := field.NewPath("spec", "replicatedJobs")
	for i := range hj.Spec.ReplicatedJobs {
		rj := &hj.Spec.ReplicatedJobs[i]
		rjPath := rjsPath.Index(i)
		// The template is checked as the spec of the child job with the
		// longest name, so that the pod names derived from it are checked at
		// their longest too; without a valid child name only the spec is.
		childName := ""
		if namesChecked {
			nameErrs := validateChildNames(prefix, rj, rjPath.Child("name"))
			errs = append(errs, nameErrs...)
			if len(nameErrs) == 0 {
				childName = longestChildName(prefix, rj)
			}
		}
		errs = append(errs, validateTemplate(&rj.TemplateSpec, childName, rjPath.Child("templateSpec"), rjPath.Child("name"))...)
		for j, cluster := range rj.ClusterNames {
			for _, msg := range validation.IsDNS1123Subdomain(cluster) {
				errs = append(errs, field.Invalid(rjPath.Child("clusterNames").Index(j), cluster, msg))
			}
		}
		if sp := rj.SplitPolicy; sp != nil && sp.AcceleratorType != nil {
			errs = append(errs, validateAcceleratorType(*sp.AcceleratorType, &rj.TemplateSpec,
				rjPath.Child("splitPolicy", "acceleratorType"))...)
		}
	}
	return errs
}

// longestChildName is the name of the last child job of a replicated job,
// the one with the highest index.
func longestChildName(prefix string, rj *trainingv1alpha1.ReplicatedJob) string {
	return fmt.Sprintf("%s-%s-%d", prefix, rj.Name, max(rj.Replicas, 1)-1)
}

// validateChildNames checks the longest child job name of a replicated job.
func validateChildNames(prefix string, rj *trainingv1alpha1.ReplicatedJob, path *field.Path) field.ErrorList {
	longest := longestChildName(prefix, rj)
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(longest) {
		errs = append(errs, field.Invalid(path, rj.Name, fmt.Sprintf("child job name %q is not valid: %s", longest, msg)))
	}
	return errs
}

// validateTemplate applies the Volcano Job validation to a template, as the
// member cluster will to the child job, and moves the errors from the Job's
// paths (metadata.name, spec...) to the HyperJob's.
func validateTemplate(template *batchv1alpha1.JobSpec, childName string, templatePath, namePath *field.Path) field.ErrorList {
	job := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Name: childName}, Spec: *template}
	errs := batchvalidation.ValidateJob(job)
	for i := range errs {
		switch f := errs[i].Field; {
		case f == "metadata.name":
			errs[i].Field = namePath.String()
		case f == "spec", strings.HasPrefix(f, "spec."), strings.HasPrefix(f, "spec["):
			errs[i].Field = templatePath.String() + strings.TrimPrefix(f, "spec")
		}
	}
	return errs
}

// validateAcceleratorType checks that the accelerator is a resource name and
// that some container of the template requests it: a split on a resource
// nobody asks for would split nothing.
func validateAcceleratorType(name string, template *batchv1alpha1.JobSpec, path *field.Path) field.ErrorList {
	if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
		var errs field.ErrorList
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(path, name, msg))
		}
		return errs
	}
	resource := corev1.ResourceName(name)
	for _, task := range template.Tasks {
		pod := &task.Template.Spec
		for _, containers := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
			for _, c := range containers {
				if _, ok := c.Resources.Requests[resource]; ok {
					return nil
				}
				if _, ok := c.Resources.Limits[resource]; ok {
					return nil
				}
			}
		}
	}
	return field.ErrorList{field.Invalid(path, name, "no container of templateSpec requests this resource, so there is nothing to split")}
}
