package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// fullPod is a pod with something in every part TrimPod looks at.
func fullPod() *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	res := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		}}
	}
	now := metav1.Now()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "p", UID: "uid-p",
			Labels:        map[string]string{"app": "web"},
			Annotations:   map[string]string{lastAppliedAnnotation: `{"kind":"Pod"}`, "volcano.sh/task-spec": "worker"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "setup", Image: "busybox", Command: []string{"sh", "-c", "true"}, Resources: res("2", "1Gi")},
				{Name: "proxy", Image: "envoy", RestartPolicy: &always, Resources: res("500m", "256Mi"),
					Env: []corev1.EnvVar{{Name: "A", Value: "b"}}},
			},
			Containers: []corev1.Container{{
				Name: "main", Image: "app:1", Args: []string{"--serve"},
				Ports:         []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 80}},
				Resources:     res("1", "2Gi"),
				ResizePolicy:  []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}},
				Env:           []corev1.EnvVar{{Name: "LONG", Value: "x"}},
				VolumeMounts:  []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
				LivenessProbe: &corev1.Probe{PeriodSeconds: 10},
			}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
			Overhead:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}}},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				}},
			}},
			NodeName: "n1",
		},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			NominatedNodeName: "n1",
			StartTime:         &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "main", Image: "app:1", ImageID: "sha256:abc", ContainerID: "containerd://abc", Ready: true,
				State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")},
				Resources:          ptr.To(res("3", "2Gi")),
			}},
			EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debug"}},
		},
	}
}

func TestTrimKeepsWhatSchedulingReads(t *testing.T) {
	orig := fullPod()
	obj, err := NewTransform()(orig.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*corev1.Pod)

	// What the scheduler derives from the pod is the same.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	if d := cmp.Diff(resourcehelper.PodRequests(orig, opts), resourcehelper.PodRequests(pod, opts)); d != "" {
		t.Errorf("requests with status resources changed (-before +after):\n%s", d)
	}
	before, after := api.NewTaskInfo(orig, "ns/j"), api.NewTaskInfo(pod, "ns/j")
	before.Pod, after.Pod = nil, nil
	if d := cmp.Diff(before, after, cmp.AllowUnexported(api.TaskInfo{}, api.Resource{})); d != "" {
		t.Errorf("task changed (-before +after):\n%s", d)
	}
	for _, same := range []struct {
		what          string
		before, after any
	}{
		{"labels", orig.Labels, pod.Labels},
		{"affinity", orig.Spec.Affinity, pod.Spec.Affinity},
		{"overhead", orig.Spec.Overhead, pod.Spec.Overhead},
		{"ports", orig.Spec.Containers[0].Ports, pod.Spec.Containers[0].Ports},
		{"images", orig.Spec.Containers[0].Image, pod.Spec.Containers[0].Image},
		{"resize policy", orig.Spec.Containers[0].ResizePolicy, pod.Spec.Containers[0].ResizePolicy},
		{"sidecar restart policy", orig.Spec.InitContainers[1].RestartPolicy, pod.Spec.InitContainers[1].RestartPolicy},
		{"nominated node", orig.Status.NominatedNodeName, pod.Status.NominatedNodeName},
		{"start time", orig.Status.StartTime, pod.Status.StartTime},
		{"allocated resources", orig.Status.ContainerStatuses[0].AllocatedResources, pod.Status.ContainerStatuses[0].AllocatedResources},
	} {
		if d := cmp.Diff(same.before, same.after); d != "" {
			t.Errorf("%s changed (-before +after):\n%s", same.what, d)
		}
	}

	// What no decision reads is gone.
	if pod.ManagedFields != nil || pod.Annotations[lastAppliedAnnotation] != "" {
		t.Errorf("metadata kept managedFields %v or the last-applied annotation", pod.ManagedFields)
	}
	if pod.Annotations["volcano.sh/task-spec"] != "worker" {
		t.Errorf("other annotations lost: %v", pod.Annotations)
	}
	c := pod.Spec.Containers[0]
	if c.Env != nil || c.Args != nil || c.VolumeMounts != nil || c.LivenessProbe != nil || pod.Spec.InitContainers[0].Command != nil {
		t.Errorf("container kept what it runs: %+v", c)
	}
	if pod.Spec.EphemeralContainers != nil || pod.Status.EphemeralContainerStatuses != nil {
		t.Errorf("ephemeral containers kept")
	}
	var volumes []string
	for _, v := range pod.Spec.Volumes {
		volumes = append(volumes, v.Name)
	}
	if d := cmp.Diff([]string{"data", "host"}, volumes); d != "" {
		t.Errorf("volumes (-want +got):\n%s", d)
	}
	var conditions []corev1.PodConditionType
	for _, c := range pod.Status.Conditions {
		conditions = append(conditions, c.Type)
	}
	if d := cmp.Diff([]corev1.PodConditionType{corev1.PodScheduled, corev1.PodResizeInProgress}, conditions); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if s := pod.Status.ContainerStatuses[0]; s.ImageID != "" || s.ContainerID != "" || s.State.Running != nil {
		t.Errorf("container status kept what it runs: %+v", s)
	}
}

func TestTransformLeavesNodesButTheirMetadata(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Status:     corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"app:1"}, SizeBytes: 1}}},
	}
	obj, err := NewTransform()(node)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Node)
	if got.ManagedFields != nil || len(got.Status.Images) != 1 {
		t.Errorf("node trimmed to %+v", got)
	}
	// Something that is not an object passes through.
	if v, err := NewTransform()("tombstone"); err != nil || v != "tombstone" {
		t.Errorf("transform of a string = %v, %v", v, err)
	}
}
