//go:build integration

package webhook

import (
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	testingtopo "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

// Namespaces of the tests.
const (
	ns       = "wh"
	nsTeam   = "wh-team"   // default queue team-a
	nsFrozen = "wh-frozen" // default queue closed-q
)

var res = testingsched.Resources

func queue(name string) *testingsched.QueueWrapper { return testingsched.MakeQueue(name) }

func job(name string) *testingbatch.JobWrapper {
	return testingbatch.MakeJob(name, ns).Queue("team-a").Task(testingbatch.MakeTask("worker", 1))
}

var fixturesOnce sync.Once

// fixtures starts the webhook and creates, once, the objects the tests
// refer to:
//
//	root, default, team-a (open), closed-q (Closed), busy (holds PodGroup
//	busy-pg), team-jobs (holds Job held), closing (holds PodGroup pg-closing,
//	then Closed), sci-dev (legacy path root/sci/dev), and eng (deserved cpu
//	10, guarantee 4, capability 16) with the child eng-ml (6, 2, 8);
//	the PriorityClass high; the HyperNode hn-spine, whose member hn-leaf
//	does not exist.
//
// It returns once the webhook's cache has seen them all.
func fixtures(t *testing.T) {
	t.Helper()
	webhookUp(t)
	fixturesOnce.Do(func() {
		create(t,
			namespace(ns, nil),
			namespace(nsTeam, map[string]string{schedulingv1beta1.QueueNameAnnotation: "team-a"}),
			namespace(nsFrozen, map[string]string{schedulingv1beta1.QueueNameAnnotation: "closed-q"}),
			priorityClass("high", 1000),
			queue("root").Obj(),
			queue("default").Obj(),
			queue("team-a").Obj(),
			queue("closed-q").Obj(),
			queue("busy").Obj(),
			queue("team-jobs").Obj(),
			queue("closing").Obj(),
			queue("toggle").Obj(),
			queue("sci-dev").Hierarchy("root/sci/dev", "1/1/1").Obj(),
			queue("eng").Deserved(res("cpu", "10")).Guarantee(res("cpu", "4")).Capability(res("cpu", "16")).Obj(),
			queue("eng-ml").Parent("eng").Deserved(res("cpu", "6")).Guarantee(res("cpu", "2")).Capability(res("cpu", "8")).Obj(),
			testingsched.MakePodGroup("busy-pg", ns).Queue("busy").MinMember(1).Obj(),
			testingsched.MakePodGroup("pg-open", ns).Queue("team-a").MinMember(1).Obj(),
			testingsched.MakePodGroup("pg-closing", ns).Queue("closing").MinMember(1).Obj(),
			job("held").Queue("team-jobs").Obj(),
			hyperNodeSpine(),
		)
		for name, state := range map[string]schedulingv1beta1.QueueState{
			"default": schedulingv1beta1.QueueStateOpen, "team-a": schedulingv1beta1.QueueStateOpen,
			"closed-q": schedulingv1beta1.QueueStateClosed, "closing": schedulingv1beta1.QueueStateClosed,
		} {
			setQueueState(t, name, state)
		}
		// The informers of queues, PodGroups and jobs each lag on their
		// own: wait until each has what the tests need.
		poll.Eventually(t, t.Context(), 30*time.Second, "the webhook sees closing as Closed", func() (bool, string) {
			pg := testingsched.MakePodGroup("probe", ns).Queue("closing").Obj()
			return succeeded(refusedWith(fw.Client.Create(t.Context(), pg, client.DryRunAll), "queue is Closed"))
		})
		poll.Eventually(t, t.Context(), 30*time.Second, "the webhook sees PodGroup busy-pg", func() (bool, string) {
			return succeeded(refusedWith(fw.Client.Delete(t.Context(), queue("busy").Obj(), client.DryRunAll), "unfinished PodGroup"))
		})
		poll.Eventually(t, t.Context(), 30*time.Second, "the webhook sees Job held", func() (bool, string) {
			return succeeded(refusedWith(fw.Client.Delete(t.Context(), queue("team-jobs").Obj(), client.DryRunAll), "unfinished job"))
		})
		poll.Eventually(t, t.Context(), 30*time.Second, "the webhook sees HyperNode hn-spine", func() (bool, string) {
			return succeeded(refusedWith(fw.Client.Create(t.Context(), hyperNodeLeafOfSpine(), client.DryRunAll), "would form a cycle"))
		})
	})
}

func hyperNodeSpine() *topologyv1alpha1.HyperNode {
	return testingtopo.MakeHyperNode("hn-spine", 2).ExactHyperNode("hn-leaf").Obj()
}

// hyperNodeLeafOfSpine is hn-spine's member, listing hn-spine in turn.
func hyperNodeLeafOfSpine() *topologyv1alpha1.HyperNode {
	return testingtopo.MakeHyperNode("hn-leaf", 1).ExactNode("node-1").ExactHyperNode("hn-spine").Obj()
}

// setQueueState writes status.state, as the queue controller would.
func setQueueState(t *testing.T, name string, state schedulingv1beta1.QueueState) {
	t.Helper()
	var q schedulingv1beta1.Queue
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, &q); err != nil {
		t.Fatal(err)
	}
	q.Status.State = state
	if err := fw.Client.Status().Update(t.Context(), &q); err != nil {
		t.Fatalf("setting queue %s %s: %v", name, state, err)
	}
}

func getJob(t *testing.T, name string) *batchv1alpha1.Job {
	t.Helper()
	var j batchv1alpha1.Job
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}
