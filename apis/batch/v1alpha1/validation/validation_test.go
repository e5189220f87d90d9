package validation

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchtesting "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// Errors are compared by type and field; details are prose.
var ignoreDetail = cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")

func invalid(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeInvalid, Field: path}
}

func required(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeRequired, Field: path}
}

func duplicate(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeDuplicate, Field: path}
}

func notSupported(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeNotSupported, Field: path}
}

func notFound(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeNotFound, Field: path}
}

func forbidden(path string) *field.Error {
	return &field.Error{Type: field.ErrorTypeForbidden, Field: path}
}

// defaulted returns job after SetDefaults_Job, as admission hands it to
// validation.
func defaulted(job *batchv1alpha1.Job) *batchv1alpha1.Job {
	batchv1alpha1.SetDefaults_Job(job)
	return job
}

func claim() *corev1.PersistentVolumeClaimSpec {
	return &corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		},
	}
}

func TestValidateJob(t *testing.T) {
	job := func() *batchtesting.JobWrapper { return batchtesting.MakeJob("j", "ns") }
	task := batchtesting.MakeTask

	cases := map[string]struct {
		job  *batchv1alpha1.Job
		want field.ErrorList
	}{
		"multi-task job with job and task policies": {
			job: job().MinAvailable(3).Plugin("svc").Plugin("env").
				Policy(batchtesting.OnEvents(busv1alpha1.RestartJobAction, batchv1alpha1.PodEvictedEvent, batchv1alpha1.PodFailedEvent)).
				Policy(batchtesting.After(batchtesting.OnEvent(busv1alpha1.AbortJobAction, batchv1alpha1.PodPendingEvent), 10*time.Minute)).
				Policy(batchtesting.OnExitCode(busv1alpha1.TerminateJobAction, 137)).
				Task(task("ps", 1)).
				Task(task("worker", 2).Policy(batchtesting.OnEvent(busv1alpha1.CompleteJobAction, batchv1alpha1.TaskCompletedEvent))).Obj(),
		},
		"single task with minSuccess": {
			job: job().MinAvailable(1).MinSuccess(3).Task(task("worker", 10)).Obj(),
		},
		"dependency chain": {
			job: job().
				Task(task("prepare", 1)).
				Task(task("train", 2).DependsOn(batchv1alpha1.IterationAll, "prepare")).
				Task(task("report", 1).DependsOn(batchv1alpha1.IterationAny, "prepare", "train")).Obj(),
		},
		"partitioned task with whole CPUs and a NUMA policy": {
			job: job().Task(task("worker", 8).Partition(4, 2, 2).TopologyPolicy(batchv1alpha1.NumaPolicySingleNumaNode).CPURequest("2")).Obj(),
		},
		"event repeated within one policy": {
			job: job().Policy(batchv1alpha1.LifecyclePolicy{
				Action: busv1alpha1.RestartJobAction, Event: batchv1alpha1.PodFailedEvent,
				Events: []batchv1alpha1.Event{batchv1alpha1.PodFailedEvent},
			}).Task(task("a", 1)).Obj(),
		},
		"OOM policy on the job and on a task": {
			job: job().Policy(batchtesting.OnOOMKilled(0, "16Gi")).
				Task(task("ps", 1).Memory("1Gi", "")).
				Task(task("worker", 2).Memory("2Gi", "4Gi").Policy(batchtesting.OnOOMKilled(25, "8Gi"))).Obj(),
		},
		"OOM policy without memoryScaling": {
			job: job().Policy(batchtesting.OnEvent(batchv1alpha1.RestartTaskWithMoreMemoryAction, batchv1alpha1.OOMKilledEvent)).
				Task(task("a", 1).Memory("1Gi", "")).Obj(),
			want: field.ErrorList{required("spec.policies[0].memoryScaling")},
		},
		"memoryScaling with another action": {
			job: job().Policy(func() batchv1alpha1.LifecyclePolicy {
				p := batchtesting.OnOOMKilled(0, "8Gi")
				p.Action = busv1alpha1.RestartTaskAction
				return p
			}()).Task(task("a", 1).Memory("1Gi", "")).Obj(),
			want: field.ErrorList{forbidden("spec.policies[0].memoryScaling")},
		},
		"OOM policy on an event without an OOM-killed pod": {
			job: job().Policy(func() batchv1alpha1.LifecyclePolicy {
				p := batchtesting.OnOOMKilled(0, "8Gi")
				p.Event = batchv1alpha1.PodEvictedEvent
				return p
			}()).Task(task("a", 1).Memory("1Gi", "")).Obj(),
			want: field.ErrorList{invalid("spec.policies[0].action")},
		},
		"OOM policy over a container that asks for no memory": {
			job:  job().Task(task("a", 1).Policy(batchtesting.OnOOMKilled(0, "8Gi"))).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].policies[0].action")},
		},
		"OOM policy capped below a container's limit": {
			job:  job().Policy(batchtesting.OnOOMKilled(0, "2Gi")).Task(task("a", 1).Memory("1Gi", "4Gi")).Obj(),
			want: field.ErrorList{invalid("spec.policies[0].memoryScaling.maxMemory")},
		},
		"OOM policy raising by 1000%": {
			job:  job().Policy(batchtesting.OnOOMKilled(1000, "8Gi")).Task(task("a", 1).Memory("1Gi", "")).Obj(),
			want: field.ErrorList{invalid("spec.policies[0].memoryScaling.increasePercent")},
		},
		"no tasks": {
			job:  job().Obj(),
			want: field.ErrorList{required("spec.tasks")},
		},
		"job minAvailable above total replicas": {
			job:  job().MinAvailable(4).Task(task("a", 1)).Task(task("b", 2)).Obj(),
			want: field.ErrorList{invalid("spec.minAvailable")},
		},
		"task minAvailable above replicas": {
			job:  job().MinAvailable(1).Task(task("a", 1).MinAvailable(2)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].minAvailable")},
		},
		"negative replicas": {
			job:  job().MinAvailable(1).Task(task("a", -1).MinAvailable(0)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].replicas"), invalid("spec.tasks[0].minAvailable"), invalid("spec.minAvailable")},
		},
		"negative minSuccess": {
			job:  job().MinSuccess(0).Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.minSuccess")},
		},
		"duplicate task names": {
			job:  job().Task(task("a", 1)).Task(task("a", 1)).Obj(),
			want: field.ErrorList{duplicate("spec.tasks[1].name")},
		},
		"defaulted task name collides with a given one": {
			job:  job().Task(task("", 1)).Task(task("default0", 1)).Obj(),
			want: field.ErrorList{duplicate("spec.tasks[1].name")},
		},
		"task name not a DNS label": {
			job:  job().Task(task("Worker_1", 1)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].name")},
		},
		"pod names too long": {
			job:  batchtesting.MakeJob(strings.Repeat("j", 54), "ns").Task(task("worker", 100)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].name")},
		},
		"job name too long": {
			job:  batchtesting.MakeJob(strings.Repeat("j", 64), "ns").Task(task("w", 1)).Obj(),
			want: field.ErrorList{invalid("metadata.name"), invalid("spec.tasks[0].name")},
		},
		"task without containers": {
			job:  job().Task(task("a", 1).NoContainers()).Obj(),
			want: field.ErrorList{required("spec.tasks[0].template.spec.containers")},
		},
		"policy with exitCode and event": {
			job: job().Policy(batchv1alpha1.LifecyclePolicy{
				Action: busv1alpha1.RestartJobAction, Event: batchv1alpha1.PodFailedEvent, ExitCode: ptr.To[int32](1),
			}).Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.policies[0].exitCode")},
		},
		"policy with neither event nor exitCode": {
			job:  job().Policy(batchv1alpha1.LifecyclePolicy{Action: busv1alpha1.RestartJobAction}).Task(task("a", 1)).Obj(),
			want: field.ErrorList{required("spec.policies[0]")},
		},
		"exitCode 0": {
			job:  job().Policy(batchtesting.OnExitCode(busv1alpha1.RestartJobAction, 0)).Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.policies[0].exitCode")},
		},
		"exitCode in two policies": {
			job: job().
				Policy(batchtesting.OnExitCode(busv1alpha1.RestartJobAction, 3)).
				Policy(batchtesting.OnExitCode(busv1alpha1.AbortJobAction, 3)).
				Task(task("a", 1)).Obj(),
			want: field.ErrorList{duplicate("spec.policies[1].exitCode")},
		},
		"internal event": {
			job:  job().Policy(batchtesting.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.OutOfSyncEvent)).Task(task("a", 1)).Obj(),
			want: field.ErrorList{notSupported("spec.policies[0].event")},
		},
		"event in two policies": {
			job: job().
				Policy(batchtesting.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodFailedEvent)).
				Policy(batchtesting.OnEvents(busv1alpha1.AbortJobAction, batchv1alpha1.PodEvictedEvent, batchv1alpha1.PodFailedEvent)).
				Task(task("a", 1)).Obj(),
			want: field.ErrorList{duplicate("spec.policies[1].events[1]")},
		},
		"any event combined with another event": {
			job: job().
				Policy(batchtesting.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.AnyEvent)).
				Policy(batchtesting.OnEvent(busv1alpha1.AbortJobAction, batchv1alpha1.PodEvictedEvent)).
				Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.policies")},
		},
		"event without action": {
			job:  job().Policy(batchtesting.OnEvent("", batchv1alpha1.PodFailedEvent)).Task(task("a", 1)).Obj(),
			want: field.ErrorList{required("spec.policies[0].action")},
		},
		"internal action": {
			job:  job().Policy(batchtesting.OnEvent("SyncJob", batchv1alpha1.PodFailedEvent)).Task(task("a", 1)).Obj(),
			want: field.ErrorList{notSupported("spec.policies[0].action")},
		},
		"negative timeout": {
			job:  job().Policy(batchtesting.After(batchtesting.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodPendingEvent), -time.Second)).Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.policies[0].timeout")},
		},
		"task policy errors are reported under the task": {
			job:  job().Task(task("a", 1).Policy(batchtesting.OnExitCode(busv1alpha1.RestartTaskAction, 0))).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].policies[0].exitCode")},
		},
		"volume with neither claim name nor claim": {
			job:  job().Volume(batchv1alpha1.VolumeSpec{MountPath: "/data"}).Task(task("a", 1)).Obj(),
			want: field.ErrorList{required("spec.volumes[0]")},
		},
		"volume with both claim name and claim": {
			job:  job().Volume(batchv1alpha1.VolumeSpec{MountPath: "/data", VolumeClaimName: "c", VolumeClaim: claim()}).Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.volumes[0].volumeClaimName")},
		},
		"volumes with the same mount path": {
			job: job().
				Volume(batchv1alpha1.VolumeSpec{MountPath: "/data", VolumeClaimName: "c1"}).
				Volume(batchv1alpha1.VolumeSpec{MountPath: "/data", VolumeClaim: claim()}).
				Task(task("a", 1)).Obj(),
			want: field.ErrorList{duplicate("spec.volumes[1].mountPath")},
		},
		"volume mount path with a colon and a bad claim name": {
			job:  job().Volume(batchv1alpha1.VolumeSpec{MountPath: "/a:b", VolumeClaimName: "Bad_Name"}).Task(task("a", 1)).Obj(),
			want: field.ErrorList{invalid("spec.volumes[0].mountPath"), invalid("spec.volumes[0].volumeClaimName")},
		},
		"dependency on an unknown task": {
			job:  job().Task(task("a", 1)).Task(task("b", 1).DependsOn(batchv1alpha1.IterationAll, "c")).Obj(),
			want: field.ErrorList{notFound("spec.tasks[1].dependsOn.name[0]")},
		},
		"dependency on itself": {
			job:  job().Task(task("a", 1).DependsOn(batchv1alpha1.IterationAll, "a")).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].dependsOn.name[0]")},
		},
		"dependency named twice": {
			job:  job().Task(task("a", 1)).Task(task("b", 1).DependsOn(batchv1alpha1.IterationAll, "a", "a")).Obj(),
			want: field.ErrorList{duplicate("spec.tasks[1].dependsOn.name[1]")},
		},
		"dependency cycle": {
			job: job().
				Task(task("a", 1).DependsOn(batchv1alpha1.IterationAll, "c")).
				Task(task("b", 1).DependsOn(batchv1alpha1.IterationAll, "a")).
				Task(task("c", 1).DependsOn(batchv1alpha1.IterationAll, "b")).
				Task(task("d", 1)).Obj(),
			want: field.ErrorList{invalid("spec.tasks")},
		},
		"unknown iteration": {
			job:  job().Task(task("a", 1)).Task(task("b", 1).DependsOn("some", "a")).Obj(),
			want: field.ErrorList{notSupported("spec.tasks[1].dependsOn.iteration")},
		},
		"NUMA policy with a fractional CPU request": {
			job:  job().Task(task("a", 1).TopologyPolicy(batchv1alpha1.NumaPolicyRestricted).CPURequest("1500m")).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].template.spec.containers[0].resources.requests.cpu")},
		},
		"NUMA policy without a CPU request": {
			job:  job().Task(task("a", 1).TopologyPolicy(batchv1alpha1.NumaPolicyBestEffort)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].template.spec.containers[0].resources.requests.cpu")},
		},
		"NUMA policy none needs no CPU request": {
			job: job().Task(task("a", 1).TopologyPolicy(batchv1alpha1.NumaPolicyNone)).Obj(),
		},
		"partitions not covering the replicas": {
			job:  job().Task(task("a", 6).Partition(2, 2, 0)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].partitionPolicy")},
		},
		"more min partitions than partitions": {
			job:  job().Task(task("a", 4).Partition(2, 2, 3).MinAvailable(4)).Obj(),
			want: field.ErrorList{invalid("spec.tasks[0].partitionPolicy.minPartitions")},
		},
		"task topology naming the job's tasks": {
			job: job().Annotation(batchv1alpha1.TaskTopologyAffinityKey, "ps,worker;ps,evaluator").
				Annotation(batchv1alpha1.TaskTopologyAntiAffinityKey, "ps;worker,chief").
				Annotation(batchv1alpha1.TaskTopologyTaskOrderKey, "ps,worker,chief,evaluator").
				Task(task("ps", 2)).Task(task("worker", 4)).Task(task("chief", 1)).Task(task("evaluator", 1)).Obj(),
		},
		"task topology naming a task the job does not have": {
			job: job().Annotation(batchv1alpha1.TaskTopologyAffinityKey, "ps,wroker").
				Task(task("ps", 1)).Task(task("worker", 2)).Obj(),
			want: field.ErrorList{invalid("metadata.annotations[volcano.sh/task-topology-affinity]")},
		},
		"task topology with an empty name": {
			job: job().Annotation(batchv1alpha1.TaskTopologyTaskOrderKey, "ps,").
				Task(task("ps", 1)).Obj(),
			want: field.ErrorList{invalid("metadata.annotations")},
		},
		"network topology with tier and tier name": {
			job: job().NetworkTopology(schedulingv1beta1.NetworkTopologySpec{HighestTierAllowed: ptr.To[int32](1), HighestTierName: "rack"}).
				Task(task("a", 1)).Obj(),
			want: field.ErrorList{forbidden("spec.networkTopology.highestTierName")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ValidateJob(defaulted(tc.job))
			if diff := cmp.Diff(tc.want, got, ignoreDetail); diff != "" {
				t.Errorf("ValidateJob (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	base := func() *batchtesting.JobWrapper {
		return batchtesting.MakeJob("j", "ns").Queue("q").MinAvailable(2).
			Volume(batchv1alpha1.VolumeSpec{MountPath: "/data", VolumeClaim: claim()}).
			Task(batchtesting.MakeTask("a", 2).MinAvailable(1)).
			Task(batchtesting.MakeTask("b", 1))
	}
	oldJob := defaulted(base().Obj())

	cases := map[string]struct {
		update func(*batchv1alpha1.Job)
		want   field.ErrorList
	}{
		"no change": {
			update: func(*batchv1alpha1.Job) {},
		},
		"scale up and down": {
			update: func(j *batchv1alpha1.Job) {
				j.Spec.MinAvailable = 4
				j.Spec.MaxRetry = 10
				j.Spec.PriorityClassName = "high"
				j.Spec.Tasks[0].Replicas, j.Spec.Tasks[0].MinAvailable, j.Spec.Tasks[0].MaxRetry = 4, ptr.To[int32](4), 1
				j.Spec.Tasks[1].Replicas, j.Spec.Tasks[1].MinAvailable = 0, ptr.To[int32](0)
			},
		},
		"job controller records the claim it created": {
			update: func(j *batchv1alpha1.Job) { j.Spec.Volumes[0].VolumeClaimName = "j-volume-abcde" },
		},
		"scale below minAvailable": {
			update: func(j *batchv1alpha1.Job) { j.Spec.Tasks[0].Replicas = 0 },
			want:   field.ErrorList{invalid("spec.tasks[0].minAvailable"), invalid("spec.minAvailable")},
		},
		"task added": {
			update: func(j *batchv1alpha1.Job) {
				j.Spec.Tasks = append(j.Spec.Tasks, batchtesting.MakeTask("c", 1).MinAvailable(1).MaxRetry(3).Obj())
			},
			want: field.ErrorList{forbidden("spec.tasks")},
		},
		"task template changed": {
			update: func(j *batchv1alpha1.Job) { j.Spec.Tasks[1].Template.Spec.Containers[0].Image = "busybox:2" },
			want:   field.ErrorList{forbidden("spec.tasks[1]")},
		},
		"queue changed": {
			update: func(j *batchv1alpha1.Job) { j.Spec.Queue = "other" },
			want:   field.ErrorList{forbidden("spec")},
		},
		"policy added": {
			update: func(j *batchv1alpha1.Job) {
				j.Spec.Policies = append(j.Spec.Policies, batchtesting.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodFailedEvent))
			},
			want: field.ErrorList{forbidden("spec")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newJob := oldJob.DeepCopy()
			tc.update(newJob)
			got := ValidateJobUpdate(oldJob, newJob)
			if diff := cmp.Diff(tc.want, got, ignoreDetail); diff != "" {
				t.Errorf("ValidateJobUpdate (-want,+got):\n%s", diff)
			}
		})
	}
}
