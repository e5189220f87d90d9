package core

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// OwnerRef is the controller reference every object of the Job carries.
func OwnerRef(job *batchv1alpha1.Job) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         batchv1alpha1.SchemeGroupVersion.String(),
		Kind:               "Job",
		Name:               job.Name,
		UID:                job.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// ClaimName is the name of the claim mounted for job volume i: its
// volumeClaimName, or "<job>-pvc-<i>" for a claim the controller creates.
func ClaimName(job *batchv1alpha1.Job, i int) string {
	if n := job.Spec.Volumes[i].VolumeClaimName; n != "" {
		return n
	}
	return job.Name + "-pvc-" + strconv.Itoa(i)
}

// BuildPod returns pod index of task ti as the Job wants it.
func BuildPod(job *batchv1alpha1.Job, ti, index int, plugins []JobPlugin) *corev1.Pod {
	ts := job.Spec.Tasks[ti]
	task := TaskName(job, ti)
	tmpl := ts.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            PodName(job.Name, task, index),
			Namespace:       job.Namespace,
			Labels:          tmpl.Labels,
			Annotations:     tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{OwnerRef(job)},
		},
		Spec: tmpl.Spec,
	}
	applyMemory(&pod.Spec, memoryRecord(&job.Status, task))
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	idx := strconv.Itoa(index)
	for k, v := range map[string]string{
		batchv1alpha1.JobNameKey:      job.Name,
		batchv1alpha1.JobNamespaceKey: job.Namespace,
		batchv1alpha1.QueueNameKey:    job.Spec.Queue,
		batchv1alpha1.TaskSpecKey:     task,
		batchv1alpha1.TaskIndex:       idx,
	} {
		pod.Labels[k] = v
	}
	for k, v := range map[string]string{
		batchv1alpha1.TaskSpecKey:                 task,
		batchv1alpha1.TaskIndex:                   idx,
		schedulingv1beta1.KubeGroupNameAnnotation: PodGroupName(job),
		batchv1alpha1.JobNameKey:                  job.Name,
		batchv1alpha1.QueueNameKey:                job.Spec.Queue,
		batchv1alpha1.JobVersion:                  strconv.Itoa(int(job.Status.Version)),
		batchv1alpha1.PodTemplateKey:              job.Name + "-" + task,
		batchv1alpha1.JobRetryCountKey:            strconv.Itoa(int(job.Status.RetryCount)),
	} {
		pod.Annotations[k] = v
	}
	if pp := ts.PartitionPolicy; pp != nil && pp.PartitionSize > 0 {
		pod.Labels[batchv1alpha1.TaskPartitionID] = strconv.Itoa(index / int(pp.PartitionSize))
	}
	if ts.TopologyPolicy != "" {
		pod.Annotations[schedulingv1beta1.NumaPolicyKey] = string(ts.TopologyPolicy)
	}
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = job.Spec.SchedulerName
	}
	if pod.Spec.PriorityClassName == "" {
		pod.Spec.PriorityClassName = job.Spec.PriorityClassName
	}
	for i, v := range job.Spec.Volumes {
		name := ClaimName(job, i)
		if !hasVolume(pod, name) {
			pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
			}})
		}
		for c := range pod.Spec.Containers {
			pod.Spec.Containers[c].VolumeMounts = append(pod.Spec.Containers[c].VolumeMounts,
				corev1.VolumeMount{Name: name, MountPath: v.MountPath})
		}
	}
	for _, p := range plugins {
		p.MutatePod(job, pod, task, index)
	}
	return pod
}

func hasVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

// Claims are the claims the controller creates for volumes that give a
// volumeClaim spec instead of a name.
func Claims(job *batchv1alpha1.Job) []Desired {
	var out []Desired
	for i, v := range job.Spec.Volumes {
		if v.VolumeClaimName != "" || v.VolumeClaim == nil {
			continue
		}
		out = append(out, Desired{CreateOnly: true, Object: &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: ClaimName(job, i)},
			Spec:       *v.VolumeClaim.DeepCopy(),
		}})
	}
	return out
}

// BuildPodGroup returns the Job's PodGroup as the Job wants it: the gang
// size, the minimum per task, the resources the gang needs to start, the
// queue, priority and network topology.
func BuildPodGroup(job *batchv1alpha1.Job) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       job.Namespace,
			Name:            PodGroupName(job),
			OwnerReferences: []metav1.OwnerReference{OwnerRef(job)},
			Annotations:     map[string]string{},
			Labels:          map[string]string{batchv1alpha1.JobNameKey: job.Name, batchv1alpha1.JobNamespaceKey: job.Namespace},
		},
		Spec: schedulingv1beta1.PodGroupSpec{
			MinMember:         job.Spec.MinAvailable,
			Queue:             job.Spec.Queue,
			PriorityClassName: job.Spec.PriorityClassName,
			NetworkTopology:   job.Spec.NetworkTopology.DeepCopy(),
		},
	}
	for k, v := range job.Annotations {
		pg.Annotations[k] = v
	}
	// Tasks that depend on others are created only once those run, so the
	// gang is formed from the tasks that can exist first: the dependent
	// tasks' minimums are not required of it, and its size is at most the
	// pods of the other tasks.
	var independent int32
	dependent := false
	for i, ts := range job.Spec.Tasks {
		if ts.DependsOn != nil && len(ts.DependsOn.Name) > 0 {
			dependent = true
			continue
		}
		independent += ts.Replicas
		if ts.MinAvailable != nil {
			if pg.Spec.MinTaskMember == nil {
				pg.Spec.MinTaskMember = map[string]int32{}
			}
			pg.Spec.MinTaskMember[TaskName(job, i)] = *ts.MinAvailable
		}
	}
	pg.Spec.SubGroupPolicy = subGroupPolicies(job)
	if dependent && pg.Spec.MinMember > independent {
		pg.Spec.MinMember = independent
	}
	if rl := minResources(job, pg.Spec.MinMember); len(rl) > 0 {
		pg.Spec.MinResources = &rl
	}
	return pg
}

// subGroupPolicies makes each partitioned task a sub-group policy of the
// PodGroup: the task's pods (by their task-spec label), one sub-group per
// partition (by their partition-id label) of partitionSize pods, the
// partition's network topology constraint, and minPartitions whole ones
// needed to start.
func subGroupPolicies(job *batchv1alpha1.Job) []schedulingv1beta1.SubGroupPolicySpec {
	var out []schedulingv1beta1.SubGroupPolicySpec
	for i, ts := range job.Spec.Tasks {
		pp := ts.PartitionPolicy
		if pp == nil || pp.PartitionSize <= 0 {
			continue
		}
		task := TaskName(job, i)
		size, minimum := pp.PartitionSize, pp.MinPartitions
		out = append(out, schedulingv1beta1.SubGroupPolicySpec{
			Name:            task,
			NetworkTopology: pp.NetworkTopology.DeepCopy(),
			SubGroupSize:    &size,
			MinSubGroups:    &minimum,
			LabelSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{batchv1alpha1.TaskSpecKey: task}},
			MatchLabelKeys:  []string{batchv1alpha1.TaskPartitionID},
		})
	}
	return out
}

// minResources is what the gang's first pods request: each task's own
// minimum first, then further pods in task order, up to minMember pods.
func minResources(job *batchv1alpha1.Job, minMember int32) corev1.ResourceList {
	total := corev1.ResourceList{}
	remaining := minMember
	counted := make([]int32, len(job.Spec.Tasks))
	add := func(ti int, n int32) {
		spec := &job.Spec.Tasks[ti].Template.Spec
		if rec := memoryRecord(&job.Status, TaskName(job, ti)); rec != nil {
			spec = spec.DeepCopy()
			applyMemory(spec, rec)
		}
		req := podRequests(spec)
		for name, q := range req {
			q = q.DeepCopy()
			q.Mul(int64(n))
			cur := total[name]
			cur.Add(q)
			total[name] = cur
		}
		counted[ti] += n
		remaining -= n
	}
	for ti, ts := range job.Spec.Tasks {
		if ts.MinAvailable != nil && remaining > 0 {
			add(ti, min(*ts.MinAvailable, remaining))
		}
	}
	for ti, ts := range job.Spec.Tasks {
		if remaining <= 0 {
			break
		}
		if left := ts.Replicas - counted[ti]; left > 0 {
			add(ti, min(left, remaining))
		}
	}
	return total
}

func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range spec.Containers {
		for name, q := range c.Resources.Requests {
			cur := out[name]
			cur.Add(q)
			out[name] = cur
		}
	}
	for _, c := range spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	return out
}
