package priority

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// classes are the cluster's PriorityClasses.
var classes = map[string]int32{"high": 1000, "low": 10}

// session opens a cycle of the objects, PriorityClasses resolved from
// classes, with the plugin alone; it is closed when the test ends.
func session(t *testing.T, pgs []*schedulingv1beta1.PodGroup, pods []*corev1.Pod) *framework.Session {
	t.Helper()
	snap := api.Build(api.Objects{PodGroups: pgs, Pods: pods, PriorityOf: func(class string) int32 { return classes[class] }})
	p, err := New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{})
	t.Cleanup(ssn.Close)
	return ssn
}

func pg(name, class string) *schedulingv1beta1.PodGroup {
	return schedtesting.MakePodGroup(name, "ns").MinMember(1).PriorityClassName(class).Obj()
}

// pod is a pod of the PodGroup group ("" for none) with the priority
// (none when negative).
func pod(name, group string, priority int32) *corev1.Pod {
	p := st.MakePod("ns", name)
	if group != "" {
		p.Group(group)
	}
	if priority >= 0 {
		p.Priority(priority)
	}
	return p.Obj()
}

func TestJobOrder(t *testing.T) {
	cases := map[string]struct {
		pgs  []*schedulingv1beta1.PodGroup
		pods []*corev1.Pod
		// want are the jobs' names, first first.
		want []string
	}{
		"by the PodGroup's PriorityClass, higher first": {
			pgs:  []*schedulingv1beta1.PodGroup{pg("a-low", "low"), pg("b-high", "high"), pg("c-none", "")},
			pods: []*corev1.Pod{pod("a-0", "a-low", -1), pod("b-0", "b-high", -1), pod("c-0", "c-none", -1)},
			want: []string{"b-high", "a-low", "c-none"},
		},
		"the PodGroup's PriorityClass, not its pods' priority": {
			pgs:  []*schedulingv1beta1.PodGroup{pg("a-low", "low"), pg("b-none", "")},
			pods: []*corev1.Pod{pod("a-0", "a-low", 5000), pod("b-0", "b-none", 100)},
			want: []string{"b-none", "a-low"},
		},
		"without a PriorityClass, the highest priority of its pods": {
			pgs:  []*schedulingv1beta1.PodGroup{pg("a", ""), pg("b", "")},
			pods: []*corev1.Pod{pod("a-0", "a", 50), pod("a-1", "a", 5), pod("b-0", "b", 20), pod("b-1", "b", 30)},
			want: []string{"a", "b"},
		},
		"a pod without a PodGroup, by its own priority": {
			pgs:  []*schedulingv1beta1.PodGroup{pg("a-low", "low"), pg("b-high", "high")},
			pods: []*corev1.Pod{pod("a-0", "a-low", -1), pod("b-0", "b-high", -1), pod("solo", "", 100)},
			want: []string{"b-high", api.ShadowPodGroupPrefix + "ns-solo", "a-low"},
		},
		"equal priorities: no opinion, the creation time and the name decide": {
			pgs:  []*schedulingv1beta1.PodGroup{pg("c", "low"), pg("a", "low"), pg("b", "")},
			pods: []*corev1.Pod{pod("c-0", "c", -1), pod("a-0", "a", -1), pod("b-0", "b", 10)},
			want: []string{"a", "b", "c"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ssn := session(t, tc.pgs, tc.pods)
			jobs := ssn.Snapshot.JobList()
			ssn.SortJobs(jobs)
			var got []string
			for _, j := range jobs {
				got = append(got, j.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("job order (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestTaskOrder(t *testing.T) {
	cases := map[string]struct {
		pods []*corev1.Pod
		// want are the tasks' names, first first.
		want []string
	}{
		"by the pods' priority, higher first": {
			pods: []*corev1.Pod{pod("a", "j", 1), pod("b", "j", 100), pod("c", "j", 10)},
			want: []string{"b", "c", "a"},
		},
		"a pod without a priority counts as 0": {
			pods: []*corev1.Pod{pod("a", "j", -1), pod("b", "j", 1)},
			want: []string{"b", "a"},
		},
		"equal priorities: no opinion, the name decides": {
			pods: []*corev1.Pod{pod("w-2", "j", 5), pod("w-0", "j", 5), pod("w-1", "j", 5), pod("z-launcher", "j", 7)},
			want: []string{"z-launcher", "w-0", "w-1", "w-2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ssn := session(t, []*schedulingv1beta1.PodGroup{pg("j", "")}, tc.pods)
			var tasks []*api.TaskInfo
			for _, tk := range ssn.Snapshot.Jobs[api.NewJobID("ns", "j")].Tasks {
				tasks = append(tasks, tk)
			}
			ssn.SortTasks(tasks)
			var got []string
			for _, tk := range tasks {
				got = append(got, tk.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("task order (-want,+got):\n%s", diff)
			}
		})
	}
}
