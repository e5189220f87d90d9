package podtemplate_test

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/caldera-sh/caldera/pkg/webhooks/podtemplate"
)

// FuzzValidatePodTemplate decodes a pod template and validates it as a
// Job's task template: nothing panics, the template is not changed, and the
// verdict is deterministic.
func FuzzValidatePodTemplate(f *testing.F) {
	for _, tmpl := range []corev1.PodTemplateSpec{
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}},
		{Spec: corev1.PodSpec{
			HostNetwork: true,
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
			Containers: []corev1.Container{{Name: "Main_1", Ports: []corev1.ContainerPort{{Name: "p", ContainerPort: 80}, {Name: "p", ContainerPort: 80}},
				Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "missing", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}},
	} {
		b, err := json.Marshal(tmpl)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	path := field.NewPath("spec", "tasks").Index(0).Child("template")
	f.Fuzz(func(t *testing.T, data []byte) {
		var tmpl corev1.PodTemplateSpec
		if err := json.Unmarshal(data, &tmpl); err != nil {
			return
		}
		before := tmpl.DeepCopy()
		first := podtemplate.Validate(&tmpl, path)
		if !reflect.DeepEqual(before, &tmpl) {
			t.Fatal("Validate changed the template")
		}
		second := podtemplate.Validate(tmpl.DeepCopy(), path)
		if len(first) != len(second) {
			t.Fatalf("Validate is not deterministic: %d then %d errors", len(first), len(second))
		}
		for i := range first {
			if first[i].Type != second[i].Type || first[i].Field != second[i].Field || first[i].Detail != second[i].Detail {
				t.Fatalf("Validate is not deterministic:\n%v\n%v", first[i], second[i])
			}
		}
	})
}
