//go:build integration

package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/writeback"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestQueueStatusWriteReplacesAllocated: the scheduler computes a queue's
// status from its informer, which may not yet show the scheduler's own
// last write. A resource that write allocated is removed by the next one
// even when the informer's copy of the Queue does not list it; a Queue
// with no status at all is written too.
func TestQueueStatusWriteReplacesAllocated(t *testing.T) {
	const ns, name = "writeback", "writeback-stale"
	q := queue(name, 1, nil)
	createQueue(t, q)
	w := writeback.NewWriter(statusClient(t), nil)
	go w.Run(t.Context(), 1)
	served := func() (schedulingv1beta1.QueueStatus, error) {
		got := &schedulingv1beta1.Queue{}
		err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, got)
		return got.Status, err
	}

	// A running one-pod job in the queue; the informer shows no status.
	pg := schedtesting.MakePodGroup("pg", ns).Queue(name).MinMember(1).Phase(schedulingv1beta1.PodGroupRunning).Obj()
	pod := st.MakePod(ns, "p").Group("pg").Req("cpu", "500m").Node("n1").Phase(corev1.PodRunning).Obj()
	pod.Annotations = map[string]string{schedulingv1beta1.QueueNameAnnotation: name}
	running := api.Build(api.Objects{Pods: []*corev1.Pod{pod}, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Queues: []*schedulingv1beta1.Queue{q.DeepCopy()}})
	w.Apply(running, nil, nil, metav1.Now())
	poll.Eventually(t, t.Context(), 30*time.Second, "500m allocated in the served status", func() (bool, string) {
		st, err := served()
		if err != nil {
			return false, err.Error()
		}
		cpu := st.Allocated[corev1.ResourceCPU]
		return cpu.MilliValue() == 500 && st.Pending+st.Running == 1, fmt.Sprintf("%+v", st)
	})

	// The job is gone. The informer's copy shows the job counted from an
	// older write but not the allocation: the next write must still remove it.
	stale := q.DeepCopy()
	stale.Status = schedulingv1beta1.QueueStatus{Pending: 1}
	idle := api.Build(api.Objects{Queues: []*schedulingv1beta1.Queue{stale}})
	w.Apply(idle, nil, nil, metav1.Now())
	poll.Eventually(t, t.Context(), 30*time.Second, "nothing allocated in the served status", func() (bool, string) {
		st, err := served()
		if err != nil {
			return false, err.Error()
		}
		return len(st.Allocated) == 0 && st.Pending+st.Running == 0, fmt.Sprintf("%+v", st)
	})
}

// TestGangStatusCoalesced: a gang's pods are bound, then start one after
// another, each moving its counts. Held (writeback.SettleHold for a gang
// that shows Running already, writeback.StartHold for one placed now, until
// its pods have all started, and for one admitted now with all its pods,
// until its placement), phase and counts reach the API server as one write.
func TestGangStatusCoalesced(t *testing.T) {
	const ns = "writeback-coalesce"
	createNamespace(t, ns)
	wc, err := client.NewWithWatch(fw.RESTConfig(), client.Options{Scheme: fw.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// A step is how many of the gang's 3 pods are bound and how many of
	// those run.
	type step struct{ bound, running int }
	placedNow := []step{{3, 0}, {3, 1}, {3, 2}, {3, 3}}
	for _, tc := range []struct {
		name string
		// shown is the phase the PodGroup shows; decided the one the
		// scheduler decided before the first step (cache.KeepPhases).
		shown, decided schedulingv1beta1.PodGroupPhase
		steps          []step
	}{
		{"running", schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupRunning, placedNow},
		{"inqueue", schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupInqueue, placedNow},
		{"pending", schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupPending, placedNow},
		{"admitted", schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupInqueue, append([]step{{0, 0}}, placedNow...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "gang-" + tc.name
			pg := schedtesting.MakePodGroup(name, ns).MinMember(3).Phase(tc.shown).Obj()
			if err := fw.Client.Create(t.Context(), pg); err != nil {
				t.Fatal(err)
			}
			if err := fw.Client.Status().Update(t.Context(), pg); err != nil {
				t.Fatal(err)
			}
			watch, err := wc.Watch(t.Context(), &schedulingv1beta1.PodGroupList{}, client.InNamespace(ns),
				client.MatchingFields{"metadata.name": name}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: pg.ResourceVersion}})
			if err != nil {
				t.Fatal(err)
			}
			defer watch.Stop()
			w := writeback.NewWriter(statusClient(t), nil)
			go w.Run(t.Context(), 1)

			id := api.NewJobID(ns, name)
			for _, sp := range tc.steps {
				var pods []*corev1.Pod
				for i := range 3 {
					p := st.MakePod(ns, fmt.Sprintf("%s-%d", name, i)).Group(name).Req("cpu", "1")
					if i < sp.bound {
						p = p.Node("n1")
					}
					if i < sp.running {
						p = p.Phase(corev1.PodRunning)
					}
					pods = append(pods, p.Obj())
				}
				snap := api.Build(api.Objects{Pods: pods, PodGroups: []*schedulingv1beta1.PodGroup{pg.DeepCopy()}})
				snap.Jobs[id].Phase = tc.decided
				w.Apply(snap, nil, map[api.JobID]bool{id: true}, metav1.Now())
			}

			writes := 0
			deadline := time.After(30 * time.Second)
			for {
				select {
				case ev := <-watch.ResultChan():
					got, ok := ev.Object.(*schedulingv1beta1.PodGroup)
					if !ok || ev.Type != "MODIFIED" {
						continue
					}
					writes++
					if got.Status.Phase == schedulingv1beta1.PodGroupRunning && got.Status.Running == 3 {
						if writes != 1 {
							t.Errorf("%d status writes before the gang showed Running with 3 pods running, want 1", writes)
						}
						return
					}
				case <-deadline:
					t.Fatalf("the gang never showed Running with 3 pods running (%d writes seen)", writes)
				}
			}
		})
	}
}

func statusClient(t *testing.T) rest.Interface {
	t.Helper()
	c, err := writeback.NewStatusClient(fw.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
