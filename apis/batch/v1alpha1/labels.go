package v1alpha1

// Label and annotation keys the job controller puts on the objects it creates
// (pods, pod groups, services, claims). Tools such as the MPI operator,
// Kubeflow and users' own scripts select pods by them, so the strings follow
// Volcano exactly.
const (
	// JobNameKey holds the job name, on pods as label and annotation.
	JobNameKey = "volcano.sh/job-name"
	// JobNamespaceKey holds the job namespace, on pods as label and annotation.
	JobNamespaceKey = "volcano.sh/job-namespace"
	// QueueNameKey holds the job's queue, on pods as label and annotation.
	QueueNameKey = "volcano.sh/queue-name"
	// TaskSpecKey holds the task name, on pods as label and annotation.
	TaskSpecKey = "volcano.sh/task-spec"
	// TaskIndex holds the pod's index within its task (0..replicas-1), on
	// pods as label and annotation.
	TaskIndex = "volcano.sh/task-index"
	// TaskPartitionID holds the pod's partition (index / partitionSize) when
	// the task has a partition policy, as a pod label.
	TaskPartitionID = "volcano.sh/partition-id"
	// JobVersion holds status.version of the job when the pod was created, as
	// a pod annotation.
	JobVersion = "volcano.sh/job-version"
	// JobRetryCountKey holds status.retryCount of the job when the pod was
	// created, as a pod annotation.
	JobRetryCountKey = "volcano.sh/job-retry-count"
	// JobTypeKey is a job label that tools set to name the framework of the
	// job (for example a training operator's job kind).
	JobTypeKey = "volcano.sh/job-type"
	// PodTemplateKey marks pods built from the same task template (an
	// equivalence class for the scheduler), as a pod annotation.
	PodTemplateKey = "volcano.sh/template-uid"
	// JobForwardingKey marks a job, and its pods, that is forwarded to
	// another cluster.
	JobForwardingKey = "volcano.sh/job-forwarding"
	// ForwardClusterKey names the cluster a pod was forwarded to.
	ForwardClusterKey = "volcano.sh/forward-cluster"
	// OriginalNameKey holds the original name of a resource burst into
	// another cluster.
	OriginalNameKey = "volcano.sh/burst-name"
	// BurstToSiloClusterAnnotation marks a resource that exists only in a
	// silo cluster.
	BurstToSiloClusterAnnotation = "volcano.sh/silo-resource"
	// ReservationNameKey names the reservation a pod belongs to.
	ReservationNameKey = "volcano.sh/reservation-name"
	// CronJobScheduledTimestampAnnotation records the time a cron job meant
	// to start the job.
	CronJobScheduledTimestampAnnotation = "volcano.sh/cronjob-scheduled-timestamp"

	// DefaultTaskSpec is the task-spec value of a pod whose task has no name,
	// and the prefix of defaulted task names ("default0", "default1", ...).
	DefaultTaskSpec = "default"
	// PodGroupNamePrefix is the prefix of pod group names of jobs that were
	// created by older Volcano versions.
	PodGroupNamePrefix = "podgroup-"
)
