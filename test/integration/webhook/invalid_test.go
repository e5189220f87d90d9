//go:build integration

package webhook

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	testingbus "github.com/caldera-sh/caldera/apis/bus/v1alpha1/testing"
	testingdd "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	testingtopo "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	testingtraining "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// invalidCase is a request the webhook must refuse: the creation of obj, or
// what do does.
type invalidCase struct {
	obj client.Object
	do  func(ctx context.Context, t *testing.T) error
	// want is the field error the refusal must contain.
	want string
}

// withTemplate returns a job whose only task's pod template is changed by f.
func withTemplate(name string, f func(*corev1.PodSpec)) *batchv1alpha1.Job {
	j := job(name).Obj()
	f(&j.Spec.Tasks[0].Template.Spec)
	return j
}

func withJob(name string, f func(*batchv1alpha1.Job)) *batchv1alpha1.Job {
	j := job(name).Obj()
	f(j)
	return j
}

func update[T client.Object](key client.ObjectKey, obj T, change func(T)) func(context.Context, *testing.T) error {
	return func(ctx context.Context, t *testing.T) error {
		if err := fw.Client.Get(ctx, key, obj); err != nil {
			t.Fatal(err)
		}
		change(obj)
		return fw.Client.Update(ctx, obj)
	}
}

func deleteQueue(name string) func(context.Context, *testing.T) error {
	return func(ctx context.Context, _ *testing.T) error {
		return fw.Client.Delete(ctx, queue(name).Obj())
	}
}

func invalidJobs() map[string]invalidCase {
	return map[string]invalidCase{
		"job/queue does not exist": {
			obj:  job("j-no-queue").Queue("nope").Obj(),
			want: `spec.queue: Invalid value: "nope": queue does not exist; existing queues: busy, closed-q, closing, default, eng, eng-ml`,
		},
		"job/queue closed": {
			obj:  job("j-closed").Queue("closed-q").Obj(),
			want: `spec.queue: Invalid value: "closed-q": queue is Closed: it accepts no new work until it is opened`,
		},
		"job/root queue": {
			obj:  job("j-root").Queue("root").Obj(),
			want: `spec.queue: Invalid value: "root": the root queue stands for the whole cluster and cannot hold work`,
		},
		"job/queue with children": {
			obj:  job("j-parent").Queue("eng").Obj(),
			want: `spec.queue: Invalid value: "eng": queue has child queues (eng-ml): work runs in leaf queues only`,
		},
		"job/PriorityClass does not exist": {
			obj:  job("j-pc").PriorityClassName("urgent").Obj(),
			want: `spec.priorityClassName: Invalid value: "urgent": PriorityClass does not exist`,
		},
		"job/unknown plugin": {
			obj:  job("j-plugin").Plugin("horovod").Obj(),
			want: `spec.plugins[horovod]: Unsupported value: "horovod": supported values: "env", "hcclrank", "mpi"`,
		},
		"job/name longer than a label": {
			obj:  job(strings.Repeat("j", 64)).Obj(),
			want: `metadata.name: Invalid value: "` + strings.Repeat("j", 64) + `"`,
		},
		"job/pod names too long": {
			obj: testingbatch.MakeJob("j-"+strings.Repeat("a", 38), ns).Queue("team-a").
				Task(testingbatch.MakeTask(strings.Repeat("t", 30), 1)).Obj(),
			want: `spec.tasks[0].name: Invalid value: "` + strings.Repeat("t", 30) + `": pod name`,
		},
		"job/event in two policies": {
			obj: job("j-dup-event").
				Policy(testingbatch.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodFailedEvent)).
				Policy(testingbatch.OnEvent(busv1alpha1.AbortJobAction, batchv1alpha1.PodFailedEvent)).Obj(),
			want: `spec.policies[1].event: Duplicate value: "PodFailed"`,
		},
		"job/any event with others": {
			obj: job("j-any").
				Policy(testingbatch.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.AnyEvent)).
				Policy(testingbatch.OnEvent(busv1alpha1.AbortJobAction, batchv1alpha1.PodEvictedEvent)).Obj(),
			want: `spec.policies: Invalid value: "*": the event * matches every event and cannot be combined with other events`,
		},
		"job/unsupported policy action": {
			obj:  job("j-action").Policy(batchv1alpha1.LifecyclePolicy{Event: batchv1alpha1.PodFailedEvent, Action: "SyncJob"}).Obj(),
			want: `spec.policies[0].action: Unsupported value: "SyncJob": supported values: "AbortJob", "CompleteJob",`,
		},
		"job/exit code in two policies": {
			obj: job("j-dup-code").
				Policy(testingbatch.OnExitCode(busv1alpha1.RestartJobAction, 3)).
				Policy(testingbatch.OnExitCode(busv1alpha1.AbortJobAction, 3)).Obj(),
			want: `spec.policies[1].exitCode: Duplicate value: 3`,
		},
		"job/dependency on an unknown task": {
			obj: testingbatch.MakeJob("j-dep", ns).Queue("team-a").
				Task(testingbatch.MakeTask("a", 1).DependsOn(batchv1alpha1.IterationAll, "nope")).Obj(),
			want: `spec.tasks[0].dependsOn.name[0]: Not found: "nope"`,
		},
		"job/dependency cycle": {
			obj: testingbatch.MakeJob("j-cycle", ns).Queue("team-a").
				Task(testingbatch.MakeTask("a", 1).DependsOn(batchv1alpha1.IterationAll, "b")).
				Task(testingbatch.MakeTask("b", 1).DependsOn(batchv1alpha1.IterationAll, "a")).Obj(),
			want: `spec.tasks: Invalid value: "a, b": dependsOn must not form a cycle`,
		},
		"job/task depending on itself": {
			obj: testingbatch.MakeJob("j-self", ns).Queue("team-a").
				Task(testingbatch.MakeTask("a", 1).DependsOn(batchv1alpha1.IterationAll, "a")).Obj(),
			want: `spec.tasks[0].dependsOn.name[0]: Invalid value: "a": a task cannot depend on itself`,
		},
		"job/NUMA policy without whole CPUs": {
			obj: testingbatch.MakeJob("j-numa", ns).Queue("team-a").
				Task(testingbatch.MakeTask("a", 1).TopologyPolicy(batchv1alpha1.NumaPolicySingleNumaNode).CPURequest("500m")).Obj(),
			want: `spec.tasks[0].template.spec.containers[0].resources.requests.cpu: Invalid value: "500m": topologyPolicy single-numa-node needs a whole number of CPUs`,
		},
		"job/mpi plugin without its master task": {
			obj:  job("j-mpi").Plugin("mpi").Obj(),
			want: `spec.plugins[mpi]: Invalid value:`,
		},
		"job/volume with a claim name and a claim": {
			obj: job("j-volume").Volume(batchv1alpha1.VolumeSpec{
				MountPath: "/data", VolumeClaimName: "data",
				VolumeClaim: &corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}).Obj(),
			want: `spec.volumes[0].volumeClaimName: Invalid value: "data": must not be set together with volumeClaim`,
		},
		"job/container without image": {
			obj:  withTemplate("j-image", func(p *corev1.PodSpec) { p.Containers[0].Image = "" }),
			want: `spec.tasks[0].template.spec.containers[0].image: Required value`,
		},
		"job/GPU share and whole cards": {
			obj: withTemplate("j-gpu", func(p *corev1.PodSpec) {
				p.Containers[0].Resources.Limits = corev1.ResourceList{
					"volcano.sh/gpu-memory": resource.MustParse("4000"), "volcano.sh/gpu-number": resource.MustParse("1")}
			}),
			want: `spec.tasks[0].template.spec.containers[0].resources.limits[volcano.sh/gpu-number]: Invalid value: "1": the pod also asks for volcano.sh/gpu-memory`,
		},
		"job/container name not a label": {
			obj:  withTemplate("j-cname", func(p *corev1.PodSpec) { p.Containers[0].Name = "Main_1" }),
			want: `spec.tasks[0].template.spec.containers[0].name: Invalid value: "Main_1"`,
		},
		"job/two ports of one name": {
			obj: withTemplate("j-ports", func(p *corev1.PodSpec) {
				p.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "http", ContainerPort: 8080}}
			}),
			want: `spec.tasks[0].template.spec.containers[0].ports[1].name: Duplicate value: "http"`,
		},
		"job/negative CPU request": {
			obj: withTemplate("j-negative", func(p *corev1.PodSpec) {
				p.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
			}),
			want: `spec.tasks[0].template.spec.containers[0].resources.requests[cpu]: Invalid value: "-1"`,
		},
		"job/request above limit": {
			obj: withTemplate("j-limit", func(p *corev1.PodSpec) {
				p.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}
			}),
			want: `spec.tasks[0].template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
		},
		"job/unknown restart policy": {
			obj:  withTemplate("j-restart", func(p *corev1.PodSpec) { p.RestartPolicy = "Sometimes" }),
			want: `spec.tasks[0].template.spec.restartPolicy: Unsupported value: "Sometimes"`,
		},
		"job/mount of a volume the pod does not have": {
			obj: withTemplate("j-mount", func(p *corev1.PodSpec) {
				p.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "missing", MountPath: "/data"}}
			}),
			want: `spec.tasks[0].template.spec.containers[0].volumeMounts[0].name: Not found: "missing"`,
		},
		"job/template label that is not a label": {
			obj: withJob("j-label", func(j *batchv1alpha1.Job) {
				j.Spec.Tasks[0].Template.Labels = map[string]string{"bad key!": "x"}
			}),
			want: `spec.tasks[0].template.labels: Invalid value: "bad key!"`,
		},
		"job/update of a task template": {
			do: update(client.ObjectKey{Namespace: ns, Name: "held"}, &batchv1alpha1.Job{}, func(j *batchv1alpha1.Job) {
				j.Spec.Tasks[0].Template.Spec.Containers[0].Image = "alpine"
			}),
			want: `spec.tasks[0]: Forbidden: only replicas, minAvailable and maxRetry of a task may change after the job is created`,
		},
		"job/update to a missing PriorityClass": {
			do: update(client.ObjectKey{Namespace: ns, Name: "held"}, &batchv1alpha1.Job{}, func(j *batchv1alpha1.Job) {
				j.Spec.PriorityClassName = "urgent"
			}),
			want: `spec.priorityClassName: Invalid value: "urgent": PriorityClass does not exist`,
		},
	}
}

func pg(name string) *testingsched.PodGroupWrapper {
	return testingsched.MakePodGroup(name, ns).Queue("team-a").MinMember(1)
}

func invalidPodGroups() map[string]invalidCase {
	return map[string]invalidCase{
		"podgroup/queue does not exist": {
			obj:  pg("pg-no-queue").Queue("nope").Obj(),
			want: `spec.queue: Invalid value: "nope": queue does not exist; existing queues: busy, closed-q`,
		},
		"podgroup/queue closed": {
			obj:  pg("pg-closed").Queue("closed-q").Obj(),
			want: `spec.queue: Invalid value: "closed-q": queue is Closed`,
		},
		"podgroup/root queue": {
			obj:  pg("pg-root").Queue("root").Obj(),
			want: `spec.queue: Invalid value: "root": the root queue stands for the whole cluster`,
		},
		"podgroup/queue with children": {
			obj:  pg("pg-parent").Queue("eng").Obj(),
			want: `spec.queue: Invalid value: "eng": queue has child queues (eng-ml)`,
		},
		"podgroup/namespace default queue closed": {
			obj:  testingsched.MakePodGroup("pg-frozen", nsFrozen).MinMember(1).Obj(),
			want: `spec.queue: Invalid value: "closed-q": queue is Closed`,
		},
		"podgroup/queue name that cannot name a queue": {
			obj:  pg("pg-bad-queue").Queue("Team_A").Obj(),
			want: `spec.queue: Invalid value: "Team_A": a lowercase RFC 1123 subdomain`,
		},
		"podgroup/PriorityClass does not exist": {
			obj:  pg("pg-pc").PriorityClassName("urgent").Obj(),
			want: `spec.priorityClassName: Invalid value: "urgent": PriorityClass does not exist`,
		},
		"podgroup/negative minResources": {
			obj:  pg("pg-min").MinResources(res("cpu", "-1")).Obj(),
			want: `spec.minResources[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
		},
		"podgroup/sub-group policies of one name": {
			obj: pg("pg-dup").SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a"}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a"}).Obj(),
			want: `spec.subGroupPolicy[1].name: Duplicate value: "a"`,
		},
		"podgroup/label selector without values": {
			obj: pg("pg-selector").SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a", LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpIn}},
			}}).Obj(),
			want: `spec.subGroupPolicy[0].labelSelector.matchExpressions[0].values: Required value`,
		},
		"podgroup/match label key that is not a label": {
			obj:  pg("pg-keys").SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a", MatchLabelKeys: []string{"bad key!"}}).Obj(),
			want: `spec.subGroupPolicy[0].matchLabelKeys[0]: Invalid value: "bad key!"`,
		},
	}
}

func invalidQueues() map[string]invalidCase {
	return map[string]invalidCase{
		"queue/parent does not exist": {
			obj:  queue("q-orphan").Parent("nope").Obj(),
			want: `spec.parent: Invalid value: "nope": queue does not exist; existing queues: busy, closed-q`,
		},
		"queue/parent holds work": {
			obj:  queue("q-under-busy").Parent("busy").Obj(),
			want: `spec.parent: Invalid value: "busy": queue "busy" cannot become a parent: it holds 1 unfinished PodGroup (wh/busy-pg), and work runs in leaf queues only`,
		},
		"queue/children's deserved above the parent's": {
			obj:  queue("q-eng-b").Parent("eng").Deserved(res("cpu", "6")).Obj(),
			want: `spec.deserved[cpu]: Invalid value: "6": the deserved cpu of the children of queue "eng" would add up to 12, more than its own deserved 10`,
		},
		"queue/children's guarantee above the parent's": {
			obj:  queue("q-eng-c").Parent("eng").Guarantee(res("cpu", "3")).Obj(),
			want: `spec.guarantee.resource[cpu]: Invalid value: "3": the guarantee cpu of the children of queue "eng" would add up to 5, more than its own guarantee 4`,
		},
		"queue/capability above the parent's": {
			obj:  queue("q-eng-d").Parent("eng").Capability(res("cpu", "32")).Obj(),
			want: `spec.capability[cpu]: Invalid value: "32": must not exceed the capability cpu of parent queue "eng" (16)`,
		},
		"queue/deserved above capability for a resource CEL does not compare": {
			obj:  queue("q-fpga").Capability(res("example.com/fpga", "1")).Deserved(res("example.com/fpga", "2")).Obj(),
			want: `spec.deserved[example.com/fpga]: Invalid value: "2": must be less than or equal to spec.capability[example.com/fpga] (1)`,
		},
		"queue/malformed resource name": {
			obj:  queue("q-resname").Capability(res("nvidia.com/gpu/a100", "1")).Obj(),
			want: `spec.capability[nvidia.com/gpu/a100]: Invalid value: "nvidia.com/gpu/a100": resource name`,
		},
		"queue/negative capability": {
			obj:  queue("q-negative").Capability(res("cpu", "-1")).Obj(),
			want: `spec.capability[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
		},
		"queue/hierarchy with fewer weights than segments": {
			obj:  queue("q-weights").Hierarchy("root/x/q-weights", "1/2").Obj(),
			want: `metadata.annotations[volcano.sh/hierarchy-weights]: Invalid value: "1/2": must have as many "/"-separated segments`,
		},
		"queue/hierarchy weight of zero": {
			obj:  queue("q-zero").Hierarchy("root/q-zero", "1/0").Obj(),
			want: `metadata.annotations[volcano.sh/hierarchy-weights]: Invalid value: "1/0": segment 1 ("0") must be a finite number greater than 0`,
		},
		"queue/hierarchy path on another queue's path": {
			obj:  queue("q-sci").Hierarchy("sci", "1").Obj(),
			want: `metadata.annotations[volcano.sh/hierarchy]: Invalid value: "root/sci": queue "sci-dev" is at "root/sci/dev"`,
		},
		"queue/parent that cannot name a queue": {
			obj:  queue("q-bad-parent").Parent("Team_A").Obj(),
			want: `spec.parent: Invalid value: "Team_A": a lowercase RFC 1123 subdomain`,
		},
		"queue/update making a cycle": {
			do:   update(client.ObjectKey{Name: "eng"}, &schedulingv1beta1.Queue{}, func(q *schedulingv1beta1.Queue) { q.Spec.Parent = "eng-ml" }),
			want: `spec.parent: Invalid value: "eng-ml": the queues would form a cycle: eng -> eng-ml -> eng`,
		},
		"queue/update lowering a parent's deserved below its children's": {
			do: update(client.ObjectKey{Name: "eng"}, &schedulingv1beta1.Queue{}, func(q *schedulingv1beta1.Queue) {
				q.Spec.Deserved = res("cpu", "5")
			}),
			want: `spec.deserved[cpu]: Invalid value: "5": must be at least the sum of the deserved cpu of the child queues (6)`,
		},
		"queue/update of root's capability": {
			do: update(client.ObjectKey{Name: "root"}, &schedulingv1beta1.Queue{}, func(q *schedulingv1beta1.Queue) {
				q.Spec.Capability = res("cpu", "1")
			}),
			want: `spec.capability: Forbidden: the root queue's capability cannot be changed`,
		},
		"queue/delete root": {
			do:   deleteQueue("root"),
			want: `metadata.name: Forbidden: the "root" queue cannot be deleted`,
		},
		"queue/delete default": {
			do:   deleteQueue("default"),
			want: `metadata.name: Forbidden: the "default" queue cannot be deleted`,
		},
		"queue/delete a queue with children": {
			do:   deleteQueue("eng"),
			want: `metadata.name: Forbidden: queue has child queues (eng-ml); delete them or give them another parent first`,
		},
		"queue/delete a queue with a PodGroup": {
			do:   deleteQueue("busy"),
			want: `metadata.name: Forbidden: queue still holds 1 unfinished PodGroup (wh/busy-pg); delete them or wait until they finish`,
		},
		"queue/delete a queue with a job": {
			do:   deleteQueue("team-jobs"),
			want: `metadata.name: Forbidden: queue still holds 1 unfinished job (wh/held); delete them or wait until they finish`,
		},
	}
}

func invalidHyperNodes() map[string]invalidCase {
	return map[string]invalidCase{
		"hypernode/pattern that does not compile": {
			obj:  testingtopo.MakeHyperNode("hn-regex", 1).RegexNodes("rack(").Obj(),
			want: `spec.members[0].selector.regexMatch.pattern: Invalid value: "rack(": error parsing regexp`,
		},
		"hypernode/member name that cannot name a node": {
			obj:  testingtopo.MakeHyperNode("hn-name", 1).ExactNode("Node_1").Obj(),
			want: `spec.members[0].selector.exactMatch.name: Invalid value: "Node_1"`,
		},
		"hypernode/member of itself": {
			obj:  testingtopo.MakeHyperNode("hn-self", 2).ExactHyperNode("hn-self").Obj(),
			want: `spec.members[0].selector.exactMatch.name: Invalid value: "hn-self": a HyperNode cannot be a member of itself`,
		},
		"hypernode/member that lists it": {
			obj:  hyperNodeLeafOfSpine(),
			want: `spec.members[1].selector.exactMatch.name: Invalid value: "hn-spine": the HyperNodes would form a cycle: hn-leaf -> hn-spine -> hn-leaf`,
		},
		"hypernode/member listed twice": {
			obj:  testingtopo.MakeHyperNode("hn-dup", 1).ExactNode("node-1").ExactNode("node-1").Obj(),
			want: `spec.members[1].selector.exactMatch.name: Duplicate value: "node-1"`,
		},
		"hypernode/label selector without values": {
			obj: testingtopo.MakeHyperNode("hn-labels", 1).LabelNodes(&metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpIn}},
			}).Obj(),
			want: `spec.members[0].selector.labelMatch.matchExpressions[0].values: Required value`,
		},
	}
}

func hyperJob(name string, rj *testingtraining.ReplicatedJobWrapper) *trainingv1alpha1.HyperJob {
	return testingtraining.MakeHyperJob(name, ns).ReplicatedJob(rj).Obj()
}

func invalidHyperJobs() map[string]invalidCase {
	noImage := testingtraining.MakeReplicatedJob("trainer", 1)
	noImageJob := hyperJob("hj-image", noImage)
	noImageJob.Spec.ReplicatedJobs[0].TemplateSpec.Tasks[0].Template.Spec.Containers[0].Image = ""
	return map[string]invalidCase{
		"hyperjob/child job names too long": {
			obj:  hyperJob("hj-"+strings.Repeat("l", 40), testingtraining.MakeReplicatedJob(strings.Repeat("r", 20), 1)),
			want: `spec.replicatedJobs[0].name: Invalid value: "` + strings.Repeat("r", 20) + `": child job name`,
		},
		"hyperjob/name that is not a label": {
			obj:  hyperJob("hj.v2", testingtraining.MakeReplicatedJob("trainer", 1)),
			want: `metadata.name: Invalid value: "hj.v2": prefixes the names of the child jobs`,
		},
		"hyperjob/template depending on an unknown task": {
			obj: hyperJob("hj-dep", testingtraining.MakeReplicatedJob("trainer", 1).Template(
				testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("a", 1).DependsOn(batchv1alpha1.IterationAll, "nope")).Obj().Spec)),
			want: `spec.replicatedJobs[0].templateSpec.tasks[0].dependsOn.name[0]: Not found: "nope"`,
		},
		"hyperjob/accelerator the template does not request": {
			obj:  hyperJob("hj-accel", testingtraining.MakeReplicatedJob("trainer", 1).Split(trainingv1alpha1.SplitModeStatic, 8, "nvidia.com/gpu")),
			want: `spec.replicatedJobs[0].splitPolicy.acceleratorType: Invalid value: "nvidia.com/gpu": no container of templateSpec requests this resource`,
		},
		"hyperjob/cluster name no cluster can have": {
			obj:  hyperJob("hj-cluster", testingtraining.MakeReplicatedJob("trainer", 1).Clusters("Cluster_A")),
			want: `spec.replicatedJobs[0].clusterNames[0]: Invalid value: "Cluster_A"`,
		},
		"hyperjob/template container without image": {
			obj:  noImageJob,
			want: `spec.replicatedJobs[0].templateSpec.tasks[0].template.spec.containers[0].image: Required value`,
		},
		"hyperjob/unknown plugin in a template": {
			obj: hyperJob("hj-plugin", testingtraining.MakeReplicatedJob("trainer", 1).Template(
				testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("worker", 1)).Plugin("horovod").Obj().Spec)),
			want: `spec.replicatedJobs[0].templateSpec.plugins[horovod]: Unsupported value: "horovod"`,
		},
	}
}

func invalidCommands() map[string]invalidCase {
	return map[string]invalidCase{
		"command/no target": {
			obj:  testingbus.MakeCommand("c-target", ns, busv1alpha1.AbortJobAction).Obj(),
			want: `target: Required value: the Job or Queue the command is for`,
		},
		"command/no action": {
			obj:  testingbus.MakeCommand("c-action", ns, "").TargetJob("held").Obj(),
			want: `action: Required value: the action to take on the target`,
		},
		"command/queue action for a job": {
			obj:  testingbus.MakeCommand("c-open-job", ns, busv1alpha1.OpenQueueAction).TargetJob("held").Obj(),
			want: `action: Unsupported value: "OpenQueue": supported values: "AbortJob", "CompleteJob"`,
		},
		"command/kind without a controller": {
			obj:  testingbus.MakeCommand("c-kind", ns, busv1alpha1.RestartJobAction).Target("apps/v1", "Deployment", "web").Obj(),
			want: `target.kind: Unsupported value: "Deployment": supported values: "Job", "Queue"`,
		},
		"command/job of another API group": {
			obj:  testingbus.MakeCommand("c-group", ns, busv1alpha1.AbortJobAction).Target("batch/v1", "Job", "held").Obj(),
			want: `target.apiVersion: Invalid value: "batch/v1": a Job is in API group batch.volcano.sh`,
		},
		"command/job that does not exist": {
			obj:  testingbus.MakeCommand("c-ghost-job", ns, busv1alpha1.AbortJobAction).TargetJob("ghost").Obj(),
			want: `target.name: Invalid value: "ghost": Job does not exist in namespace wh`,
		},
		"command/queue that does not exist": {
			obj:  testingbus.MakeCommand("c-ghost-queue", ns, busv1alpha1.CloseQueueAction).TargetQueue("ghost").Obj(),
			want: `target.name: Invalid value: "ghost": Queue does not exist`,
		},
		"command/job that was replaced": {
			obj:  testingbus.MakeCommand("c-uid", ns, busv1alpha1.ResumeJobAction).TargetJob("held").TargetUID("00000000-0000-0000-0000-000000000000").Obj(),
			want: `target.uid: Invalid value: "00000000-0000-0000-0000-000000000000": is not the uid of Job held`,
		},
	}
}

func invalidPods() map[string]invalidCase {
	const group, queueName = schedulingv1beta1.KubeGroupNameAnnotation, schedulingv1beta1.QueueNameAnnotation
	return map[string]invalidCase{
		"pod/queue does not exist": {
			obj:  st.MakePod(ns, "p-no-queue").Annotation(queueName, "nope").Obj(),
			want: `metadata.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "nope": queue does not exist; existing queues: busy`,
		},
		"pod/queue closed": {
			obj:  st.MakePod(ns, "p-closed").Annotation(queueName, "closed-q").Obj(),
			want: `metadata.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "closed-q": queue is Closed`,
		},
		"pod/root queue": {
			obj:  st.MakePod(ns, "p-root").Annotation(queueName, "root").Obj(),
			want: `metadata.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "root": the root queue stands for the whole cluster`,
		},
		"pod/PodGroup does not exist": {
			obj:  st.MakePod(ns, "p-no-group").Annotation(group, "ghost").Obj(),
			want: `metadata.annotations[scheduling.k8s.io/group-name]: Invalid value: "ghost": PodGroup does not exist in namespace wh`,
		},
		"pod/PodGroup in a closed queue": {
			obj:  st.MakePod(ns, "p-group-closed").Annotation(group, "pg-closing").Obj(),
			want: `metadata.annotations[scheduling.k8s.io/group-name]: Invalid value: "pg-closing": the PodGroup's queue "closing": queue is Closed`,
		},
		"pod/GPU share and whole cards": {
			obj:  st.MakePod(ns, "p-gpu").Container("gpu", "volcano.sh/gpu-memory", "4000", "volcano.sh/gpu-number", "1").Obj(),
			want: `spec.containers[1].resources.limits[volcano.sh/gpu-number]: Invalid value: "1": the pod also asks for volcano.sh/gpu-memory (spec.containers[1].resources.limits[volcano.sh/gpu-memory]): a pod shares one GPU card or takes whole cards, not both`,
		},
		"pod/disruption budget of zero": {
			obj:  st.MakePod(ns, "p-jdb-zero").Annotation(schedulingv1beta1.JDBMinAvailableKey, "0").Obj(),
			want: `metadata.annotations[volcano.sh/jdb-min-available]: Invalid value: "0": must be a positive integer or a percentage from 1% to 99%`,
		},
		"pod/disruption budget above 99%": {
			obj:  st.MakePod(ns, "p-jdb-pct").Annotation(schedulingv1beta1.JDBMaxUnavailableKey, "150%").Obj(),
			want: `metadata.annotations[volcano.sh/jdb-max-unavailable]: Invalid value: "150%": must be a positive integer or a percentage from 1% to 99%`,
		},
		"pod/two disruption budgets": {
			obj: st.MakePod(ns, "p-jdb-two").Annotation(schedulingv1beta1.JDBMinAvailableKey, "1").
				Annotation(schedulingv1beta1.JDBMaxUnavailableKey, "1").Obj(),
			want: `metadata.annotations[volcano.sh/jdb-max-unavailable]: Forbidden: must not be set together with volcano.sh/jdb-min-available`,
		},
	}
}

func invalidDataDependency() map[string]invalidCase {
	claim := func(name string) *testingdd.DataSourceClaimWrapper {
		return testingdd.MakeDataSourceClaim(name, ns, "amoro", "table", "db.t")
	}
	return map[string]invalidCase{
		"datasourceclaim/apiVersion that is not one": {
			obj:  claim("dsc-gv").Workload("apps/v1/x", "Deployment", ns, "web").Obj(),
			want: `spec.workload.apiVersion: Invalid value: "apps/v1/x"`,
		},
		"datasourceclaim/workload name that cannot name an object": {
			obj:  claim("dsc-name").Workload("batch.volcano.sh/v1alpha1", "Job", ns, "My_Job").Obj(),
			want: `spec.workload.name: Invalid value: "My_Job"`,
		},
		"datasourceclaim/workload in another namespace": {
			obj:  claim("dsc-ns").Workload("batch.volcano.sh/v1alpha1", "Job", "prod", "train").Obj(),
			want: `spec.workload.namespace: Forbidden: a claim may only refer to a workload in its own namespace wh`,
		},
		"datasource/cluster name no cluster can have": {
			obj:  testingdd.MakeDataSource("ds-cluster", "amoro", "table", "db.t").Clusters("East_1").Obj(),
			want: `spec.locality.clusterNames[0]: Invalid value: "East_1"`,
		},
	}
}

// TestInvalidObjectsAreRefused sends every invalid request of the tables
// through the API server: each must be refused by a webhook, with an Invalid
// status whose message names the field and the reason.
func TestInvalidObjectsAreRefused(t *testing.T) {
	fixtures(t)
	cases := map[string]invalidCase{}
	for _, table := range []map[string]invalidCase{
		invalidJobs(), invalidPodGroups(), invalidQueues(), invalidHyperNodes(), invalidHyperJobs(),
		invalidCommands(), invalidPods(), invalidDataDependency(),
	} {
		for name, c := range table {
			cases[name] = c
		}
	}
	if len(cases) < 50 {
		t.Fatalf("only %d invalid cases", len(cases))
	}
	t.Logf("%d invalid requests", len(cases))
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.do != nil {
				err = tc.do(t.Context(), t)
			} else {
				err = fw.Client.Create(t.Context(), tc.obj)
			}
			if err := refusedWith(err, tc.want); err != nil {
				t.Error(err)
			}
		})
	}
}
