package queue_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/queue"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

var res = testingsched.Resources

func q(name string) *testingsched.QueueWrapper {
	return testingsched.MakeQueue(name).State(schedulingv1beta1.QueueStateOpen)
}

// tree is root, default, and eng (deserved cpu 10, guarantee cpu 4,
// capability cpu 16) with the child eng-a (deserved 6, guarantee 2,
// capability 8).
func tree() []client.Object {
	return []client.Object{
		q("root").Obj(),
		q("default").Obj(),
		q("eng").Deserved(res("cpu", "10")).Guarantee(res("cpu", "4")).Capability(res("cpu", "16")).Obj(),
		q("eng-a").Parent("eng").Deserved(res("cpu", "6")).Guarantee(res("cpu", "2")).Capability(res("cpu", "8")).Obj(),
		q("sci-dev").Hierarchy("root/sci/dev", "1/1/1").Obj(),
	}
}

func job(name, queue string, phase batchv1alpha1.JobPhase) *batchv1alpha1.Job {
	j := testingbatch.MakeJob(name, "ns").Queue(queue).Task(testingbatch.MakeTask("t", 1)).Obj()
	j.Status.State.Phase = phase
	return j
}

func podGroup(name, queue string, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	return testingsched.MakePodGroup(name, "ns").Queue(queue).Phase(phase).Obj()
}

func ownedPodGroup(name, queue string, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	pg := podGroup(name, queue, phase)
	pg.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: name, UID: "u"}}
	return pg
}

func TestDefault(t *testing.T) {
	got := testingsched.MakeQueue("ml").Hierarchy("eng/ml", "2/8").Obj()
	if err := queue.NewWebhook(wt.Reader(t)).Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	want := testingsched.MakeQueue("ml").Weight(1).Reclaimable(true).Parent("root").Hierarchy("root/eng/ml", "1/2/8").Obj()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default (-want,+got):\n%s", diff)
	}
}

func TestValidateCreate(t *testing.T) {
	cases := map[string]struct {
		queue *schedulingv1beta1.Queue
		extra []client.Object
		// noRoot leaves root out of the tree.
		noRoot bool
		want   []metav1.StatusCause
	}{
		"child of root": {
			queue: q("team-b").Obj(),
		},
		"child of a root that does not exist yet": {
			queue:  q("team-b").Obj(),
			noRoot: true,
		},
		"parent that does not exist": {
			queue: q("team-b").Parent("research").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.parent",
				`Invalid value: "research": queue does not exist; existing queues: default, eng, eng-a, root, sci-dev`)},
		},
		"second child within the parent's amounts": {
			queue: q("eng-b").Parent("eng").Deserved(res("cpu", "4")).Guarantee(res("cpu", "2")).Capability(res("cpu", "16")).Obj(),
		},
		"children's deserved above the parent's": {
			queue: q("eng-b").Parent("eng").Deserved(res("cpu", "6", "memory", "1Gi")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.deserved[cpu]",
				`Invalid value: "6": the deserved cpu of the children of queue "eng" would add up to 12, more than its own deserved 10`)},
		},
		"children's guarantee above the parent's": {
			queue: q("eng-b").Parent("eng").Guarantee(res("cpu", "3")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.guarantee.resource[cpu]",
				`Invalid value: "3": the guarantee cpu of the children of queue "eng" would add up to 5, more than its own guarantee 4`)},
		},
		"capability above the parent's": {
			queue: q("eng-b").Parent("eng").Capability(res("cpu", "32")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.capability[cpu]",
				`Invalid value: "32": must not exceed the capability cpu of parent queue "eng" (16)`)},
		},
		"resources the parent does not list are not bounded": {
			queue: q("eng-b").Parent("eng").Deserved(res("nvidia.com/gpu", "64")).Capability(res("nvidia.com/gpu", "64")).Obj(),
		},
		"a leaf with unfinished jobs cannot become a parent": {
			queue: q("team-a-1").Parent("team-a").Obj(),
			extra: []client.Object{
				q("team-a").Obj(),
				job("train", "team-a", batchv1alpha1.JobRunning),
				job("old", "team-a", batchv1alpha1.JobCompleted),
				ownedPodGroup("train", "team-a", schedulingv1beta1.PodGroupRunning),
			},
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.parent",
				`Invalid value: "team-a": queue "team-a" cannot become a parent: it holds 1 unfinished job (ns/train), and work runs in leaf queues only`)},
		},
		"a leaf with PodGroups of plain pods and running pods cannot become a parent": {
			queue: q("team-a-1").Parent("team-a").Obj(),
			extra: []client.Object{
				func() client.Object {
					qq := q("team-a").Obj()
					qq.Status.Allocated = res("cpu", "2", "pods", "3")
					return qq
				}(),
				podGroup("web", "team-a", schedulingv1beta1.PodGroupRunning),
				podGroup("done", "team-a", schedulingv1beta1.PodGroupCompleted),
			},
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.parent",
				`Invalid value: "team-a": queue "team-a" cannot become a parent: it holds 1 unfinished PodGroup (ns/web) and 3 running pods, and work runs in leaf queues only`)},
		},
		"a leaf whose work has finished may become a parent": {
			queue: q("team-a-1").Parent("team-a").Obj(),
			extra: []client.Object{
				q("team-a").Obj(),
				job("old", "team-a", batchv1alpha1.JobFailed),
				ownedPodGroup("old", "team-a", schedulingv1beta1.PodGroupPending),
			},
		},
		"legacy path on the path of another queue": {
			queue: q("sci").Hierarchy("sci", "1").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[volcano.sh/hierarchy]",
				`Invalid value: "root/sci": queue "sci-dev" is at "root/sci/dev": one queue's path cannot be, or lie on, another's`)},
		},
		"legacy path below another queue": {
			queue: q("deep").Hierarchy("root/sci/dev/deep", "1/1/1/1").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[volcano.sh/hierarchy]",
				`Invalid value: "root/sci/dev/deep": queue "sci-dev" is at "root/sci/dev": one queue's path cannot be, or lie on, another's`)},
		},
		"legacy path sharing only a prefix of characters": {
			queue: q("science").Hierarchy("root/science", "1/1").Obj(),
		},
		"errors of the queue itself": {
			queue: q("gpu").Capability(res("example.com/fpga", "1")).Deserved(res("example.com/fpga", "2")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.deserved[example.com/fpga]",
				`Invalid value: "2": must be less than or equal to spec.capability[example.com/fpga] (1)`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := append(tree(), tc.extra...)
			if tc.noRoot {
				objs = objs[1:]
			}
			_, err := queue.NewWebhook(wt.Reader(t, objs...)).ValidateCreate(t.Context(), tc.queue)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	stored := func(name string) *schedulingv1beta1.Queue {
		for _, o := range tree() {
			if o.GetName() == name {
				return o.(*schedulingv1beta1.Queue)
			}
		}
		t.Fatalf("no queue %s", name)
		return nil
	}
	cases := map[string]struct {
		oldQ, newQ *schedulingv1beta1.Queue
		extra      []client.Object
		want       []metav1.StatusCause
	}{
		"a parent that would close a cycle": {
			oldQ: stored("eng"),
			newQ: q("eng").Parent("eng-a").Deserved(res("cpu", "10")).Guarantee(res("cpu", "4")).Capability(res("cpu", "16")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.parent",
				`Invalid value: "eng-a": the queues would form a cycle: eng -> eng-a -> eng`)},
		},
		"a parent's deserved below its children's": {
			oldQ: stored("eng"),
			newQ: q("eng").Deserved(res("cpu", "5")).Guarantee(res("cpu", "4")).Capability(res("cpu", "16")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.deserved[cpu]",
				`Invalid value: "5": must be at least the sum of the deserved cpu of the child queues (6)`)},
		},
		"a parent's capability below a child's": {
			oldQ: stored("eng"),
			newQ: q("eng").Deserved(res("cpu", "7")).Guarantee(res("cpu", "4")).Capability(res("cpu", "7")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.capability[cpu]",
				`Invalid value: "7": must be at least the capability cpu of child queue "eng-a" (8)`)},
		},
		"raising a child's deserved above the parent's": {
			oldQ: stored("eng-a"),
			newQ: q("eng-a").Parent("eng").Deserved(res("cpu", "11")).Guarantee(res("cpu", "2")).Capability(res("cpu", "16")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.deserved[cpu]",
				`Invalid value: "11": the deserved cpu of the children of queue "eng" would add up to 11, more than its own deserved 10`)},
		},
		"an unrelated change of a queue in an inconsistent tree": {
			oldQ:  stored("eng-a"),
			newQ:  q("eng-a").Parent("eng").Weight(3).Deserved(res("cpu", "6")).Guarantee(res("cpu", "2")).Capability(res("cpu", "8")).Obj(),
			extra: []client.Object{q("eng-b").Parent("eng").Deserved(res("cpu", "9")).Obj()},
		},
		"root's resources are fixed": {
			oldQ: stored("root"),
			newQ: q("root").Capability(res("example.com/fpga", "1")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Forbidden, "spec.capability", "Forbidden: the root queue's capability cannot be changed")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := queue.NewWebhook(wt.Reader(t, append(tree(), tc.extra...)...)).ValidateUpdate(t.Context(), tc.oldQ, tc.newQ)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateDelete(t *testing.T) {
	cases := map[string]struct {
		queue  string
		extra  []client.Object
		reader func(t *testing.T) lookup.Reader
		want   []metav1.StatusCause
	}{
		"an empty leaf": {queue: "eng-a"},
		"root": {
			queue: "root",
			want:  []metav1.StatusCause{wt.Cause(wt.Forbidden, "metadata.name", `Forbidden: the "root" queue cannot be deleted`)},
		},
		"default": {
			queue: "default",
			want:  []metav1.StatusCause{wt.Cause(wt.Forbidden, "metadata.name", `Forbidden: the "default" queue cannot be deleted`)},
		},
		"a queue with children": {
			queue: "eng",
			want: []metav1.StatusCause{wt.Cause(wt.Forbidden, "metadata.name",
				"Forbidden: queue has child queues (eng-a); delete them or give them another parent first")},
		},
		"a queue with unfinished jobs": {
			queue: "eng-a",
			extra: []client.Object{
				job("a", "eng-a", batchv1alpha1.JobRunning), job("b", "eng-a", ""),
				job("c", "eng-a", batchv1alpha1.JobAborted), job("d", "eng-a", batchv1alpha1.JobTerminated),
				ownedPodGroup("a", "eng-a", schedulingv1beta1.PodGroupRunning),
			},
			want: []metav1.StatusCause{wt.Cause(wt.Forbidden, "metadata.name",
				"Forbidden: queue still holds 3 unfinished jobs (ns/a, ns/b, ns/c); delete them or wait until they finish")},
		},
		"a queue whose work has finished": {
			queue: "eng-a",
			extra: []client.Object{
				job("a", "eng-a", batchv1alpha1.JobCompleted),
				podGroup("web", "eng-a", schedulingv1beta1.PodGroupCompleted),
			},
		},
		"a job the cache still has but the API server deleted": {
			queue: "eng-a",
			reader: func(t *testing.T) lookup.Reader {
				return wt.StaleReader(t, append(tree(), job("a", "eng-a", batchv1alpha1.JobRunning)), tree())
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reader := wt.Reader(t, append(tree(), tc.extra...)...)
			if tc.reader != nil {
				reader = tc.reader(t)
			}
			_, err := queue.NewWebhook(reader).ValidateDelete(t.Context(), q(tc.queue).Obj())
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateDelete causes (-want,+got):\n%s", diff)
			}
		})
	}
}
