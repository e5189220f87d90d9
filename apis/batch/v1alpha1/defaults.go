package v1alpha1

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Defaults applied to a Job, equal to Volcano's.
const (
	// DefaultQueue is the queue of a job that names none.
	DefaultQueue = "default"
	// DefaultSchedulerName is the scheduler of a job that names none.
	DefaultSchedulerName = "volcano"
	// DefaultMaxRetry is the maxRetry of a job, or of a task, that sets 0.
	DefaultMaxRetry int32 = 3
	// DefaultMemoryIncreasePercent is a memoryScaling's increasePercent when
	// unset (a Caldera addition).
	DefaultMemoryIncreasePercent int32 = 50
)

// Job plugins whose presence implies another plugin. The plugins themselves
// live in the job controller; only their names matter here.
const (
	svcPlugin        = "svc"
	sshPlugin        = "ssh"
	mpiPlugin        = "mpi"
	tensorflowPlugin = "tensorflow"
	pytorchPlugin    = "pytorch"
	rayPlugin        = "ray"
)

// SetDefaults_Job fills in what a Volcano job omits, as Volcano's admission
// does on create: queue, scheduler name, maxRetry of the job and its tasks,
// task names (default0, default1, ...), task minAvailable (replicas, or
// minPartitions * partitionSize for a partitioned task), job minAvailable
// (the sum of the tasks' minAvailable), ClusterFirstWithHostNet DNS for
// host-network tasks, and the svc and ssh plugins that the mpi, tensorflow,
// pytorch and ray plugins need. It also applies the schema's static
// defaults so that a job built in Go ends up as the API server would store it.
//
// It reads nothing but the job and is idempotent. A zero minAvailable or
// maxRetry counts as unset, as in Volcano.
func SetDefaults_Job(job *Job) {
	spec := &job.Spec
	if spec.Queue == "" {
		spec.Queue = DefaultQueue
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = DefaultSchedulerName
	}
	if spec.MaxRetry == 0 {
		spec.MaxRetry = DefaultMaxRetry
	}
	schedulingv1beta1.SetDefaults_NetworkTopologySpec(spec.NetworkTopology)
	setDefaultsPolicies(spec.Policies)

	for i := range spec.Tasks {
		setDefaultsTask(&spec.Tasks[i], i)
	}

	// Summed after the tasks are defaulted, so an unset task minAvailable
	// counts as its replicas.
	if spec.MinAvailable == 0 {
		var sum int32
		for _, task := range spec.Tasks {
			sum += *task.MinAvailable
		}
		spec.MinAvailable = sum
	}

	setDefaultsPlugins(spec)
}

func setDefaultsTask(task *TaskSpec, index int) {
	if task.Name == "" {
		task.Name = DefaultTaskSpec + strconv.Itoa(index)
	}
	if task.MinAvailable == nil {
		// A partitioned task is admitted with its minimum partitions, not
		// with all of its replicas.
		minAvailable := task.Replicas
		if pp := task.PartitionPolicy; pp != nil {
			minAvailable = pp.MinPartitions * pp.PartitionSize
		}
		task.MinAvailable = &minAvailable
	}
	if task.MaxRetry == 0 {
		task.MaxRetry = DefaultMaxRetry
	}
	// A host-network pod with the default DNS policy would not resolve the
	// cluster's services, which the svc plugin's host files rely on.
	if podSpec := &task.Template.Spec; podSpec.HostNetwork && podSpec.DNSPolicy == "" {
		podSpec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if pp := task.PartitionPolicy; pp != nil {
		schedulingv1beta1.SetDefaults_NetworkTopologySpec(pp.NetworkTopology)
	}
	setDefaultsPolicies(task.Policies)
}

func setDefaultsPolicies(policies []LifecyclePolicy) {
	for i := range policies {
		if ms := policies[i].MemoryScaling; ms != nil && ms.IncreasePercent == 0 {
			ms.IncreasePercent = DefaultMemoryIncreasePercent
		}
	}
}

// setDefaultsPlugins adds the plugins that others depend on: the mpi,
// tensorflow, pytorch and ray plugins read the host lists the svc plugin
// writes, and mpi needs the ssh plugin's keys.
func setDefaultsPlugins(spec *JobSpec) {
	plugins := spec.Plugins
	if plugins == nil {
		return
	}
	_, mpi := plugins[mpiPlugin]
	_, tensorflow := plugins[tensorflowPlugin]
	_, pytorch := plugins[pytorchPlugin]
	_, ray := plugins[rayPlugin]
	if _, ok := plugins[svcPlugin]; !ok && (mpi || tensorflow || pytorch || ray) {
		plugins[svcPlugin] = []string{}
	}
	if _, ok := plugins[sshPlugin]; !ok && mpi {
		plugins[sshPlugin] = []string{}
	}
}

// Defaults of a CronJob, equal to Kubernetes' and Volcano's.
const (
	DefaultSuccessfulJobsHistoryLimit int32 = 3
	DefaultFailedJobsHistoryLimit     int32 = 1
)

// SetDefaults_CronJob fills in the schema's defaults (concurrencyPolicy
// Allow, suspend false, history limits 3 and 1) and defaults the Job
// template as a Job.
func SetDefaults_CronJob(cj *CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = new(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = new(DefaultSuccessfulJobsHistoryLimit)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = new(DefaultFailedJobsHistoryLimit)
	}
	job := &Job{Spec: spec.JobTemplate.Spec}
	SetDefaults_Job(job)
	spec.JobTemplate.Spec = job.Spec
}
