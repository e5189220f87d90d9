// Package validation checks batch.volcano.sh/v1alpha1 Jobs beyond what the
// CRD schema and its CEL rules express: checks that need defaulted values
// (task names), whole-list checks too costly for CEL (duplicate events across
// policies, dependency cycles), create-only checks, and the rules for what an
// update may change. Checks that need the cluster (queue exists and is open,
// job plugin is known) belong to admission, not here.
package validation

import (
	"fmt"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedulingvalidation "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/validation"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// maxNameLength bounds job names and the pod names <job>-<task>-<index> built
// from them: pods carry the job name in a label value, and the svc plugin
// names a Service after the job.
const maxNameLength = 63

// policyEvents are the events a lifecycle policy may name.
var policyEvents = sets.New(
	batchv1alpha1.AnyEvent,
	batchv1alpha1.PodFailedEvent,
	batchv1alpha1.PodEvictedEvent,
	batchv1alpha1.PodPendingEvent,
	batchv1alpha1.JobUnknownEvent,
	batchv1alpha1.TaskCompletedEvent,
	batchv1alpha1.TaskFailedEvent,
	batchv1alpha1.JobUpdatedEvent,
	batchv1alpha1.OOMKilledEvent,
)

// policyActions are the actions a lifecycle policy may take.
var policyActions = sets.New(
	busv1alpha1.AbortJobAction,
	busv1alpha1.RestartJobAction,
	busv1alpha1.RestartTaskAction,
	busv1alpha1.RestartPodAction,
	batchv1alpha1.RestartPartitionAction,
	batchv1alpha1.RestartTaskWithMoreMemoryAction,
	busv1alpha1.TerminateJobAction,
	busv1alpha1.CompleteJobAction,
	busv1alpha1.ResumeJobAction,
)

var (
	numaPolicies = sets.New(
		batchv1alpha1.NumaPolicyNone,
		batchv1alpha1.NumaPolicyBestEffort,
		batchv1alpha1.NumaPolicyRestricted,
		batchv1alpha1.NumaPolicySingleNumaNode,
	)
	iterations    = sets.New(batchv1alpha1.IterationAny, batchv1alpha1.IterationAll)
	topologyModes = sets.New(schedulingv1beta1.HardNetworkTopologyMode, schedulingv1beta1.SoftNetworkTopologyMode)
)

// ValidateJob validates a Job being created. The job is expected to be
// defaulted (SetDefaults_Job) already, as admission does before validating.
func ValidateJob(job *batchv1alpha1.Job) field.ErrorList {
	allErrs := validateJobName(job.Name, field.NewPath("metadata", "name"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateJobSpec(&job.Spec, job.Name, specPath)...)
	allErrs = append(allErrs, validateTaskTopology(job, field.NewPath("metadata", "annotations"))...)

	// Only on create: afterwards the job controller records the name of the
	// claim it created for volumeClaim in volumeClaimName.
	for i, v := range job.Spec.Volumes {
		if v.VolumeClaimName != "" && v.VolumeClaim != nil {
			allErrs = append(allErrs, field.Invalid(specPath.Child("volumes").Index(i).Child("volumeClaimName"), v.VolumeClaimName,
				"must not be set together with volumeClaim: set volumeClaimName to mount an existing claim, or volumeClaim to have one created"))
		}
	}
	return allErrs
}

// ValidateJobUpdate validates an update of a Job from oldJob to newJob.
// After creation only the scale of a job may change: minAvailable, maxRetry
// and priorityClassName, and the replicas, minAvailable and maxRetry of each
// task; tasks cannot be added or removed.
func ValidateJobUpdate(oldJob, newJob *batchv1alpha1.Job) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := validateJobSpec(&newJob.Spec, newJob.Name, specPath)

	tasksPath := specPath.Child("tasks")
	if len(newJob.Spec.Tasks) != len(oldJob.Spec.Tasks) {
		return append(allErrs, field.Forbidden(tasksPath, "tasks cannot be added or removed after the job is created"))
	}
	for i := range newJob.Spec.Tasks {
		oldTask, newTask := scalelessTask(oldJob.Spec.Tasks[i]), scalelessTask(newJob.Spec.Tasks[i])
		if !apiequality.Semantic.DeepEqual(oldTask, newTask) {
			allErrs = append(allErrs, field.Forbidden(tasksPath.Index(i),
				"only replicas, minAvailable and maxRetry of a task may change after the job is created"))
		}
	}
	if !apiequality.Semantic.DeepEqual(scalelessSpec(&oldJob.Spec), scalelessSpec(&newJob.Spec)) {
		allErrs = append(allErrs, field.Forbidden(specPath,
			"only minAvailable, maxRetry, priorityClassName and tasks[*].replicas, tasks[*].minAvailable, tasks[*].maxRetry may change after the job is created"))
	}
	return allErrs
}

// scalelessTask returns a task without the fields an update may change.
func scalelessTask(task batchv1alpha1.TaskSpec) batchv1alpha1.TaskSpec {
	t := *task.DeepCopy()
	t.Replicas, t.MinAvailable, t.MaxRetry = 0, nil, 0
	return t
}

// scalelessSpec returns a spec without tasks and without the fields an update
// may change, including the claim names the job controller fills in.
func scalelessSpec(spec *batchv1alpha1.JobSpec) *batchv1alpha1.JobSpec {
	s := spec.DeepCopy()
	s.Tasks = nil
	s.MinAvailable, s.MaxRetry, s.PriorityClassName = 0, 0, ""
	for i := range s.Volumes {
		if s.Volumes[i].VolumeClaim != nil {
			s.Volumes[i].VolumeClaimName = ""
		}
	}
	return s
}

func validateJobName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" { // generateName is resolved before validation; nothing to check here.
		return nil
	}
	if msgs := utilvalidation.IsQualifiedName(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fldPath, name, strings.Join(msgs, "; "))}
	}
	return nil
}

func validateJobSpec(spec *batchv1alpha1.JobSpec, jobName string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	if spec.MinAvailable < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("minAvailable"), spec.MinAvailable, "must be greater than or equal to 0"))
	}
	if spec.MaxRetry < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxRetry"), spec.MaxRetry, "must be greater than or equal to 0"))
	}
	if ttl := spec.TTLSecondsAfterFinished; ttl != nil && *ttl < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("ttlSecondsAfterFinished"), *ttl, "must be greater than or equal to 0"))
	}
	if ms := spec.MinSuccess; ms != nil && *ms < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("minSuccess"), *ms, "must be greater than or equal to 1"))
	}
	if spec.Queue == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("queue"), "defaulting sets \"default\""))
	} else if msgs := utilvalidation.IsDNS1123Subdomain(spec.Queue); len(msgs) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queue"), spec.Queue, strings.Join(msgs, "; ")))
	}
	if spec.PriorityClassName != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(spec.PriorityClassName); len(msgs) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("priorityClassName"), spec.PriorityClassName, strings.Join(msgs, "; ")))
		}
	}
	if d := spec.RunningEstimate; d != nil && d.Duration < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("runningEstimate"), d.Duration.String(), "must not be negative"))
	}
	allErrs = append(allErrs, schedulingvalidation.ValidateNetworkTopology(spec.NetworkTopology, fldPath.Child("networkTopology"))...)
	allErrs = append(allErrs, validateTasks(spec, jobName, fldPath)...)
	allErrs = append(allErrs, validatePolicies(spec.Policies, spec.Tasks, fldPath.Child("policies"))...)
	allErrs = append(allErrs, validateVolumes(spec.Volumes, fldPath.Child("volumes"))...)
	return allErrs
}

func validateTasks(spec *batchv1alpha1.JobSpec, jobName string, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := specPath.Child("tasks")
	if len(spec.Tasks) == 0 {
		return field.ErrorList{field.Required(fldPath, "a job must have at least one task")}
	}

	names := sets.New[string]()
	var totalReplicas int64
	for i := range spec.Tasks {
		task := &spec.Tasks[i]
		taskPath := fldPath.Index(i)
		totalReplicas += int64(task.Replicas)

		allErrs = append(allErrs, validateTaskName(task, jobName, taskPath)...)
		if task.Name != "" {
			if names.Has(task.Name) {
				allErrs = append(allErrs, field.Duplicate(taskPath.Child("name"), task.Name))
			}
			names.Insert(task.Name)
		}

		if task.Replicas < 0 {
			allErrs = append(allErrs, field.Invalid(taskPath.Child("replicas"), task.Replicas, "must be greater than or equal to 0"))
		}
		if ma := task.MinAvailable; ma != nil {
			if *ma < 0 {
				allErrs = append(allErrs, field.Invalid(taskPath.Child("minAvailable"), *ma, "must be greater than or equal to 0"))
			} else if *ma > task.Replicas {
				allErrs = append(allErrs, field.Invalid(taskPath.Child("minAvailable"), *ma, "task minAvailable must not be greater than task replicas"))
			}
		}
		if task.MaxRetry < 0 {
			allErrs = append(allErrs, field.Invalid(taskPath.Child("maxRetry"), task.MaxRetry, "must be greater than or equal to 0"))
		}
		if len(task.Template.Spec.Containers) == 0 {
			allErrs = append(allErrs, field.Required(taskPath.Child("template", "spec", "containers"), "a task's pod template must have at least one container"))
		}
		allErrs = append(allErrs, validateTopologyPolicy(task, taskPath)...)
		allErrs = append(allErrs, validatePartitionPolicy(task, taskPath.Child("partitionPolicy"))...)
		allErrs = append(allErrs, validatePolicies(task.Policies, spec.Tasks[i:i+1], taskPath.Child("policies"))...)
	}

	if int64(spec.MinAvailable) > totalReplicas {
		allErrs = append(allErrs, field.Invalid(specPath.Child("minAvailable"), spec.MinAvailable,
			"must not be greater than the sum of the replicas of all tasks"))
	}
	allErrs = append(allErrs, validateDependencies(spec.Tasks, fldPath)...)
	return allErrs
}

func validateTaskName(task *batchv1alpha1.TaskSpec, jobName string, taskPath *field.Path) field.ErrorList {
	namePath := taskPath.Child("name")
	if task.Name == "" {
		return field.ErrorList{field.Required(namePath, "defaulting names unnamed tasks default<index>")}
	}
	if msgs := utilvalidation.IsDNS1123Label(task.Name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(namePath, task.Name, strings.Join(msgs, "; "))}
	}
	if jobName == "" {
		return nil
	}
	// The longest pod name of the task is that of its last replica.
	podName := fmt.Sprintf("%s-%s-%d", jobName, task.Name, max(task.Replicas-1, 0))
	if msgs := utilvalidation.IsQualifiedName(podName); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(namePath, task.Name,
			fmt.Sprintf("pod name %q (<job>-<task>-<index>) is invalid: %s", podName, strings.Join(msgs, "; ")))}
	}
	return nil
}

// validateTopologyPolicy requires whole CPUs of tasks with a NUMA policy: the
// kubelet's static CPU manager pins only integer CPU requests.
func validateTopologyPolicy(task *batchv1alpha1.TaskSpec, taskPath *field.Path) field.ErrorList {
	policy := task.TopologyPolicy
	if policy == "" {
		return nil
	}
	fldPath := taskPath.Child("topologyPolicy")
	if !numaPolicies.Has(policy) {
		return field.ErrorList{field.NotSupported(fldPath, policy, sets.List(numaPolicies))}
	}
	if policy == batchv1alpha1.NumaPolicyNone {
		return nil
	}
	var allErrs field.ErrorList
	podSpec := &task.Template.Spec
	check := func(containers []corev1.Container, kind string) {
		for i, c := range containers {
			cpu, ok := c.Resources.Requests[corev1.ResourceCPU]
			if !ok && len(c.Resources.Requests) == 0 {
				cpu, ok = c.Resources.Limits[corev1.ResourceCPU] // requests default to limits
			}
			if !ok || cpu.Sign() <= 0 || cpu.MilliValue()%1000 != 0 {
				allErrs = append(allErrs, field.Invalid(taskPath.Child("template", "spec", kind).Index(i).Child("resources", "requests", "cpu"),
					cpu.String(), fmt.Sprintf("topologyPolicy %s needs a whole number of CPUs in every container", policy)))
			}
		}
	}
	check(podSpec.InitContainers, "initContainers")
	check(podSpec.Containers, "containers")
	return allErrs
}

func validatePartitionPolicy(task *batchv1alpha1.TaskSpec, fldPath *field.Path) field.ErrorList {
	pp := task.PartitionPolicy
	if pp == nil {
		return nil
	}
	var allErrs field.ErrorList
	if pp.TotalPartitions < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("totalPartitions"), pp.TotalPartitions, "must be greater than or equal to 1"))
	}
	if pp.PartitionSize < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("partitionSize"), pp.PartitionSize, "must be greater than or equal to 1"))
	}
	if pp.MinPartitions < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("minPartitions"), pp.MinPartitions, "must be greater than or equal to 0"))
	} else if pp.MinPartitions > pp.TotalPartitions {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("minPartitions"), pp.MinPartitions,
			"partitionPolicy.minPartitions must not be greater than partitionPolicy.totalPartitions"))
	}
	if int64(pp.TotalPartitions)*int64(pp.PartitionSize) != int64(task.Replicas) {
		allErrs = append(allErrs, field.Invalid(fldPath, fmt.Sprintf("%d*%d", pp.TotalPartitions, pp.PartitionSize),
			fmt.Sprintf("partitionPolicy.totalPartitions * partitionPolicy.partitionSize must equal task replicas (%d)", task.Replicas)))
	}
	allErrs = append(allErrs, schedulingvalidation.ValidateNetworkTopology(pp.NetworkTopology, fldPath.Child("networkTopology"))...)
	return allErrs
}

// validatePolicies checks one list of lifecycle policies (the job's, or one
// task's) covering the given tasks. Within a list an event or exit code may
// appear in one policy only, and "*" excludes every other event.
func validatePolicies(policies []batchv1alpha1.LifecyclePolicy, covered []batchv1alpha1.TaskSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seenEvents := sets.New[batchv1alpha1.Event]()
	seenExitCodes := sets.New[int32]()

	for i := range policies {
		p := &policies[i]
		pPath := fldPath.Index(i)
		hasEvents := p.Event != "" || len(p.Events) > 0

		switch {
		case hasEvents && p.ExitCode != nil:
			allErrs = append(allErrs, field.Invalid(pPath.Child("exitCode"), *p.ExitCode, "a policy must not set exitCode together with event or events"))
		case !hasEvents && p.ExitCode == nil:
			allErrs = append(allErrs, field.Required(pPath, "a policy must set event, events or exitCode"))
		}

		if code := p.ExitCode; code != nil {
			switch {
			case *code == 0:
				allErrs = append(allErrs, field.Invalid(pPath.Child("exitCode"), *code, "exitCode must not be 0, which means the container succeeded"))
			case seenExitCodes.Has(*code):
				allErrs = append(allErrs, field.Duplicate(pPath.Child("exitCode"), *code))
			}
			seenExitCodes.Insert(*code)
		}

		// event and events are merged; repeating an event within one policy
		// is harmless.
		inPolicy := sets.New[batchv1alpha1.Event]()
		check := func(e batchv1alpha1.Event, ePath *field.Path) {
			switch {
			case !policyEvents.Has(e):
				allErrs = append(allErrs, field.NotSupported(ePath, e, sets.List(policyEvents)))
			case inPolicy.Has(e):
			case seenEvents.Has(e):
				allErrs = append(allErrs, field.Duplicate(ePath, e))
			}
			inPolicy.Insert(e)
		}
		if p.Event != "" {
			check(p.Event, pPath.Child("event"))
		}
		for j, e := range p.Events {
			check(e, pPath.Child("events").Index(j))
		}
		seenEvents = seenEvents.Union(inPolicy)

		switch {
		case p.Action == "" && hasEvents:
			allErrs = append(allErrs, field.Required(pPath.Child("action"), "a policy with event or events must set action"))
		case p.Action != "" && !policyActions.Has(p.Action):
			allErrs = append(allErrs, field.NotSupported(pPath.Child("action"), p.Action, sets.List(policyActions)))
		}

		if t := p.Timeout; t != nil && t.Duration < 0 {
			allErrs = append(allErrs, field.Invalid(pPath.Child("timeout"), t.Duration.String(), "must not be negative"))
		}
		allErrs = append(allErrs, validateMemoryScaling(p, covered, pPath)...)
	}

	if seenEvents.Has(batchv1alpha1.AnyEvent) && seenEvents.Len() > 1 {
		allErrs = append(allErrs, field.Invalid(fldPath, batchv1alpha1.AnyEvent,
			"the event * matches every event and cannot be combined with other events in the same policies list"))
	}
	return allErrs
}

// memoryScalingEvents are the events on which RestartTaskWithMoreMemory can
// find an OOM-killed pod.
var memoryScalingEvents = sets.New(batchv1alpha1.OOMKilledEvent, batchv1alpha1.PodFailedEvent)

// validateMemoryScaling checks a policy's memoryScaling against its action
// and the containers it covers: each must ask for memory (else there is
// nothing to raise) and fit under the cap.
func validateMemoryScaling(p *batchv1alpha1.LifecyclePolicy, covered []batchv1alpha1.TaskSpec, pPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	msPath := pPath.Child("memoryScaling")
	ms := p.MemoryScaling
	if p.Action != batchv1alpha1.RestartTaskWithMoreMemoryAction {
		if ms != nil {
			allErrs = append(allErrs, field.Forbidden(msPath, fmt.Sprintf("set only with action %s", batchv1alpha1.RestartTaskWithMoreMemoryAction)))
		}
		return allErrs
	}
	if ms == nil {
		return field.ErrorList{field.Required(msPath, fmt.Sprintf("action %s needs increasePercent and maxMemory", p.Action))}
	}
	events := append([]batchv1alpha1.Event{p.Event}, p.Events...)
	for _, e := range events {
		if e != "" && !memoryScalingEvents.Has(e) {
			allErrs = append(allErrs, field.Invalid(pPath.Child("action"), p.Action,
				fmt.Sprintf("acts on an OOM-killed pod, so its policy may name only the events %s or an exitCode, not %s",
					strings.Join(slices.Sorted(slices.Values(eventNames(memoryScalingEvents))), ", "), e)))
			break
		}
	}
	if ms.IncreasePercent < 1 || ms.IncreasePercent > 900 {
		allErrs = append(allErrs, field.Invalid(msPath.Child("increasePercent"), ms.IncreasePercent, "must be between 1 and 900"))
	}
	if ms.MaxMemory.Sign() <= 0 {
		return append(allErrs, field.Invalid(msPath.Child("maxMemory"), ms.MaxMemory.String(), "must be greater than 0"))
	}
	for _, task := range covered {
		for _, c := range task.Template.Spec.Containers {
			req, hasReq := c.Resources.Requests[corev1.ResourceMemory]
			limit, hasLimit := c.Resources.Limits[corev1.ResourceMemory]
			switch {
			case !hasReq && !hasLimit:
				allErrs = append(allErrs, field.Invalid(pPath.Child("action"), p.Action,
					fmt.Sprintf("task %s container %s asks for no memory, so there is none to raise: set its resources.requests.memory or resources.limits.memory", task.Name, c.Name)))
			case hasLimit && limit.Cmp(ms.MaxMemory) > 0:
				allErrs = append(allErrs, field.Invalid(msPath.Child("maxMemory"), ms.MaxMemory.String(),
					fmt.Sprintf("must be at least task %s container %s's memory limit %s", task.Name, c.Name, limit.String())))
			case hasReq && req.Cmp(ms.MaxMemory) > 0:
				allErrs = append(allErrs, field.Invalid(msPath.Child("maxMemory"), ms.MaxMemory.String(),
					fmt.Sprintf("must be at least task %s container %s's memory request %s", task.Name, c.Name, req.String())))
			}
		}
	}
	return allErrs
}

func eventNames(s sets.Set[batchv1alpha1.Event]) []string {
	var out []string
	for e := range s {
		out = append(out, string(e))
	}
	return out
}

func validateVolumes(volumes []batchv1alpha1.VolumeSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountPaths := sets.New[string]()
	for i, v := range volumes {
		vPath := fldPath.Index(i)
		switch {
		case v.MountPath == "":
			allErrs = append(allErrs, field.Required(vPath.Child("mountPath"), ""))
		case strings.Contains(v.MountPath, ":"):
			allErrs = append(allErrs, field.Invalid(vPath.Child("mountPath"), v.MountPath, "must not contain ':'"))
		case mountPaths.Has(v.MountPath):
			allErrs = append(allErrs, field.Duplicate(vPath.Child("mountPath"), v.MountPath))
		}
		mountPaths.Insert(v.MountPath)

		if v.VolumeClaimName == "" && v.VolumeClaim == nil {
			allErrs = append(allErrs, field.Required(vPath, "a volume must set volumeClaimName or volumeClaim"))
		}
		if v.VolumeClaimName != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(v.VolumeClaimName); len(msgs) > 0 {
				allErrs = append(allErrs, field.Invalid(vPath.Child("volumeClaimName"), v.VolumeClaimName, strings.Join(msgs, "; ")))
			}
		}
	}
	return allErrs
}

// validateDependencies checks that every task a task depends on exists, is
// named once, is not the task itself, and that the dependencies form no
// cycle.
func validateDependencies(tasks []batchv1alpha1.TaskSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for _, t := range tasks {
		names.Insert(t.Name)
	}

	dependsOn := map[string][]string{} // task -> tasks it waits for, known ones only
	for i, t := range tasks {
		if t.DependsOn == nil {
			continue
		}
		dPath := fldPath.Index(i).Child("dependsOn")
		if it := t.DependsOn.Iteration; it != "" && !iterations.Has(it) {
			allErrs = append(allErrs, field.NotSupported(dPath.Child("iteration"), it, sets.List(iterations)))
		}
		seen := sets.New[string]()
		for j, dep := range t.DependsOn.Name {
			nPath := dPath.Child("name").Index(j)
			switch {
			case dep == t.Name:
				allErrs = append(allErrs, field.Invalid(nPath, dep, "a task cannot depend on itself"))
			case !names.Has(dep):
				allErrs = append(allErrs, field.NotFound(nPath, dep))
			case seen.Has(dep):
				allErrs = append(allErrs, field.Duplicate(nPath, dep))
			default:
				dependsOn[t.Name] = append(dependsOn[t.Name], dep)
			}
			seen.Insert(dep)
		}
	}

	if cycle := tasksInCycles(tasks, dependsOn); len(cycle) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, strings.Join(cycle, ", "),
			"dependsOn must not form a cycle; these tasks can never start"))
	}
	return allErrs
}

// tasksInCycles returns, sorted, the tasks that can never start because they
// wait, directly or not, on themselves. It peels off tasks whose dependencies
// have all started (Kahn's algorithm); what is left is in or behind a cycle.
func tasksInCycles(tasks []batchv1alpha1.TaskSpec, dependsOn map[string][]string) []string {
	waiting := map[string]int{}
	dependents := map[string][]string{}
	for task, deps := range dependsOn {
		waiting[task] = len(deps)
		for _, dep := range deps {
			dependents[dep] = append(dependents[dep], task)
		}
	}
	var ready []string
	seeded := sets.New[string]()
	for _, t := range tasks {
		if waiting[t.Name] == 0 && !seeded.Has(t.Name) {
			ready = append(ready, t.Name)
			seeded.Insert(t.Name)
		}
	}
	for len(ready) > 0 {
		task := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		for _, d := range dependents[task] {
			waiting[d]--
			if waiting[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	var stuck []string
	for task, n := range waiting {
		if n > 0 {
			stuck = append(stuck, task)
		}
	}
	slices.Sort(stuck)
	return stuck
}

// validateTaskTopology checks the task-topology annotations: well formed,
// and naming only tasks of the job.
func validateTaskTopology(job *batchv1alpha1.Job, fldPath *field.Path) field.ErrorList {
	tt, err := batchv1alpha1.ParseTaskTopology(job.Annotations)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, "", err.Error())}
	}
	if tt == nil {
		return nil
	}
	tasks := sets.New[string]()
	for _, t := range job.Spec.Tasks {
		tasks.Insert(t.Name)
	}
	var allErrs field.ErrorList
	check := func(key string, names []string) {
		for _, n := range names {
			if !tasks.Has(n) {
				allErrs = append(allErrs, field.Invalid(fldPath.Key(key), job.Annotations[key],
					fmt.Sprintf("names task %q, which the job does not have (its tasks: %s)", n, strings.Join(sets.List(tasks), ", "))))
				return
			}
		}
	}
	for _, g := range tt.Affinity {
		check(batchv1alpha1.TaskTopologyAffinityKey, g)
	}
	for _, g := range tt.AntiAffinity {
		check(batchv1alpha1.TaskTopologyAntiAffinityKey, g)
	}
	check(batchv1alpha1.TaskTopologyTaskOrderKey, tt.Order)
	return allErrs
}
