package victims

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// TestSearchPlace: what Place does for job "hi" (priority 10): what it
// reports, what the evictor was handed, and where each of the job's tasks
// and each victim stands afterwards.
func TestSearchPlace(t *testing.T) {
	type outcome struct {
		Committed bool
		Victims   []string
		Blocked   string
		Evicted   []string
		// Tasks maps a task's name to its status and node.
		Tasks map[string]string
	}
	inqueue := schedulingv1beta1.PodGroupInqueue
	cases := map[string]struct {
		objects api.Objects
		gate    Gate
		want    outcome
	}{
		"a task that fits after evictions is placed on the room being freed": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("hi", 1, inqueue)},
				Pods:      []*corev1.Pod{pod("low", "4", 1, "n1"), member("hi", "hi-0", "2", 10, "")},
			},
			want: outcome{
				Committed: true, Victims: []string{"low"}, Evicted: []string{"low"},
				Tasks: map[string]string{"low": "Releasing@n1", "hi-0": "Pipelined@n1"},
			},
		},
		"a gang that fits after evictions is placed whole": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("hi", 2, inqueue)},
				Pods: []*corev1.Pod{
					pod("low", "4", 1, "n1"), pod("mid", "4", 5, "n2"),
					member("hi", "hi-0", "4", 10, ""), member("hi", "hi-1", "4", 10, ""),
				},
			},
			want: outcome{
				Committed: true, Victims: []string{"low", "mid"}, Evicted: []string{"low", "mid"},
				Tasks: map[string]string{"low": "Releasing@n1", "mid": "Releasing@n2", "hi-0": "Pipelined@n1", "hi-1": "Pipelined@n2"},
			},
		},
		"a task that fits as things are evicts nothing": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("hi", 1, inqueue)},
				Pods:      []*corev1.Pod{pod("low", "2", 1, "n1"), member("hi", "hi-0", "2", 10, "")},
			},
			want: outcome{
				Committed: true,
				Tasks:     map[string]string{"low": "Running@n1", "hi-0": "Binding@n1"},
			},
		},
		"a gang that evictions cannot complete evicts nothing": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("hi", 3, inqueue)},
				Pods: []*corev1.Pod{
					pod("low", "4", 1, "n1"),
					member("hi", "hi-0", "2", 10, ""), member("hi", "hi-1", "2", 10, ""), member("hi", "hi-2", "2", 10, ""),
				},
			},
			want: outcome{
				Blocked: "NoVictims",
				Tasks:   map[string]string{"low": "Running@n1", "hi-0": "Pending@", "hi-1": "Pending@", "hi-2": "Pending@"},
			},
		},
		"a job with nothing it may evict": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("hi", 1, inqueue)},
				Pods:      []*corev1.Pod{pod("peer", "4", 10, "n1"), member("hi", "hi-0", "2", 10, "")},
			},
			want: outcome{
				Blocked: "NoVictims",
				Tasks:   map[string]string{"peer": "Running@n1", "hi-0": "Pending@"},
			},
		},
		"a job its queue refuses evicts nothing": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("hi", 1, inqueue)},
				Pods:      []*corev1.Pod{pod("low", "4", 1, "n1"), member("hi", "hi-0", "2", 10, "")},
			},
			gate: func(*api.TaskInfo) (bool, *framework.Reason) {
				return false, framework.Reasonf("QueueFull", "no room in the queue")
			},
			want: outcome{
				Blocked: "QueueFull",
				Tasks:   map[string]string{"low": "Running@n1", "hi-0": "Pending@"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ssn, r := open(t, tc.objects, nil)
			job, _ := task(t, ssn.Snapshot, "hi-0")
			res := NewSearch(ssn, lowerPriority()).Place(job, tc.gate, func(*api.TaskInfo) string { return "preempted" })
			got := outcome{
				Committed: res.Committed,
				Victims:   names(res.Victims),
				Evicted:   r.Evictions,
				Tasks:     map[string]string{},
			}
			if res.Blocked != nil {
				got.Blocked = res.Blocked.Type
			}
			for name := range tc.want.Tasks {
				_, tk := task(t, ssn.Snapshot, name)
				got.Tasks[name] = tk.Status.String() + "@" + tk.NodeName
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want,+got):\n%s", diff)
			}
		})
	}
}
