package victims

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

const running = schedulingv1beta1.PodGroupRunning

func TestEvictable(t *testing.T) {
	cases := map[string]struct {
		status       api.TaskStatus
		noEvictUntil time.Time
		want         bool
	}{
		"a running task":                              {status: api.Running, want: true},
		"a bound task holds its node":                 {status: api.Bound, want: true},
		"a releasing task is already leaving":         {status: api.Releasing},
		"a pending task holds nothing":                {status: api.Pending},
		"a pipelined task holds only a claim":         {status: api.Pipelined},
		"a task allocated in this cycle is not bound": {status: api.Allocated},
		"a succeeded task holds nothing":              {status: api.Succeeded},
		"a refused eviction holds the task back":      {status: api.Running, noEvictUntil: now.Add(time.Second)},
		"the hold ends at its time":                   {status: api.Running, noEvictUntil: now, want: true},
		"an ended hold":                               {status: api.Running, noEvictUntil: now.Add(-time.Minute), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			task := &api.TaskInfo{Status: tc.status, NoEvictUntil: tc.noEvictUntil}
			if got := Evictable(task, now); got != tc.want {
				t.Errorf("Evictable = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestChooseOn: the victims chosen on node n1 for the pending pod "high"
// (priority 10, 2 CPUs unless said), in eviction order; nil when the node
// cannot be made room on.
func TestChooseOn(t *testing.T) {
	notPreemptable := func(p *corev1.Pod) *corev1.Pod {
		p.Annotations[schedulingv1beta1.PreemptableKey] = "false"
		return p
	}
	annotated := func(p *corev1.Pod) *corev1.Pod {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		return notPreemptable(p)
	}
	high := func() *corev1.Pod { return pod("high", "2", 10, "") }
	cases := map[string]struct {
		objects api.Objects
		edit    func(t *testing.T, s *api.Snapshot)
		policy  func(p *Policy)
		want    []string
	}{
		"the least important task that makes room": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("mid", "2", 5, "n1"), pod("low", "2", 1, "n1"), high()},
			},
			want: []string{"low"},
		},
		"as many as it takes, least important first": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "6")},
				Pods:  []*corev1.Pod{pod("mid", "2", 5, "n1"), pod("low", "2", 1, "n1"), pod("top", "2", 9, "n1"), pod("high", "6", 10, "")},
			},
			want: []string{"low", "mid", "top"},
		},
		"the node's idle room counts": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "1", 1, "n1"), pod("mid", "2", 5, "n1"), high()},
			},
			want: []string{"low"},
		},
		"no room even with every candidate gone": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "1", 1, "n1"), pod("peer", "3", 10, "n1"), pod("high", "8", 10, "")},
			},
		},
		"the policy's ineligible tasks are not candidates": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("peer", "4", 10, "n1"), high()},
			},
		},
		"a task refused a lately eviction is not a candidate": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "4", 1, "n1"), high()},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				_, low := task(t, s, "low")
				low.NoEvictUntil = now.Add(time.Minute)
			},
		},
		"a task that is already leaving is not a candidate": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "4", 1, "n1"), high()},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				j, low := task(t, s, "low")
				j.SetTaskStatus(low, api.Releasing)
			},
		},
		"a task annotated not preemptable is not a candidate": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{annotated(pod("low", "4", 1, "n1")), high()},
			},
		},
		"the preemptor's own job's tasks are not candidates": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("self", 1, running)},
				Pods:      []*corev1.Pod{member("self", "self-0", "4", 1, "n1"), member("self", "high", "2", 10, "")},
			},
			policy: func(p *Policy) {
				p.Eligible = func(*api.JobInfo, *api.JobInfo, *api.TaskInfo) bool { return true }
			},
		},
		"a job the preemptor lost tasks to lately is not a candidate": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "4", 1, "n1"), high()},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				lowJob, _ := task(t, s, "low")
				highJob, _ := task(t, s, "high")
				highJob.EvictedBy = map[api.JobID]time.Time{lowJob.UID: now.Add(-time.Minute)}
			},
		},
		"a job the preemptor lost tasks to before the window is": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "4", 1, "n1"), high()},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				lowJob, _ := task(t, s, "low")
				highJob, _ := task(t, s, "high")
				highJob.EvictedBy = map[api.JobID]time.Time{lowJob.UID: now.Add(-framework.ReEvictionWindow)}
			},
			want: []string{"low"},
		},
		"the plugins narrow the candidates": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("mid", "2", 5, "n1"), pod("low", "2", 1, "n1"), high()},
			},
			policy: func(p *Policy) { p.Narrow = without("low") },
			want:   []string{"mid"},
		},
		"nearer tasks go before less important ones": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("far", "2", 1, "n1"), pod("near", "2", 5, "n1"), high()},
			},
			policy: func(p *Policy) { p.Distance = farFrom("far") },
			want:   []string{"near"},
		},
		"a lower job priority goes before a lower pod priority": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{
					podGroup("a", 1, running), podGroup("b", 1, running),
				},
				Pods: []*corev1.Pod{
					// Job a's priority is its most important pod's, 5.
					member("a", "a-0", "2", 1, "n1"), member("a", "a-1", "2", 5, "n2"),
					member("b", "b-0", "2", 3, "n1"), member("b", "b-1", "2", 3, "n2"),
					high(),
				},
			},
			want: []string{"b-0"},
		},
		"among equals, a job not evicted from lately goes first": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("a", "2", 1, "n1"), pod("b", "2", 1, "n1"), high()},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				j, _ := task(t, s, "a")
				j.EvictedBy = map[api.JobID]time.Time{"ns/other": now.Add(-time.Minute)}
			},
			want: []string{"b"},
		},
		"among equals, the most recently started goes first": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{createdAt(pod("a", "2", 1, "n1"), 30), createdAt(pod("b", "2", 1, "n1"), 10), high()},
			},
			want: []string{"a"},
		},
		"among equals started together, by name": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("b", "2", 1, "n1"), pod("a", "2", 1, "n1"), high()},
			},
			want: []string{"a"},
		},
		"a task its job can spare goes before a gang is broken": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{
					podGroup("a", 2, running), podGroup("z", 1, running),
				},
				Pods: []*corev1.Pod{
					member("a", "a-0", "2", 1, "n1"), member("a", "a-1", "2", 1, "n2"),
					member("z", "z-0", "2", 1, "n1"), member("z", "z-1", "2", 1, "n2"),
					high(),
				},
			},
			want: []string{"z-0"},
		},
		"a job spares tasks down to its minimum only": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "6")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("z", 2, running)},
				Pods: []*corev1.Pod{
					member("z", "z-0", "2", 1, "n1"), member("z", "z-1", "2", 1, "n1"), member("z", "z-2", "2", 1, "n1"),
					pod("high", "4", 10, ""),
				},
			},
			// One task spared is not room enough: the gang goes whole.
			want: []string{"z-0", "z-1", "z-2"},
		},
		"taking a task that breaks a running gang takes the whole gang, on every node": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4"), node("n3", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 3, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "4", 1, "n1"), member("g", "g-2", "4", 1, "n2"), member("g", "g-1", "2", 1, "n3"),
					high(),
				},
			},
			want: []string{"g-0", "g-1", "g-2"},
		},
		"a gang's pending tasks are not victims": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "4", 1, "n1"), member("g", "g-1", "4", 1, "n2"), member("g", "g-2", "4", 1, ""),
					high(),
				},
			},
			want: []string{"g-0", "g-1"},
		},
		"a gang with a task not preemptable is not broken": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "4", 1, "n1"), notPreemptable(member("g", "g-1", "4", 1, "n2")),
					high(),
				},
			},
		},
		"a gang with a task held back by a refused eviction is not broken": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "4", 1, "n1"), member("g", "g-1", "4", 1, "n2"),
					high(),
				},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				_, g1 := task(t, s, "g-1")
				g1.NoEvictUntil = now.Add(time.Minute)
			},
		},
		"a gang with a task the policy may not consider is not broken": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "4", 1, "n1"), member("g", "g-1", "4", 1, "n2"),
					high(),
				},
			},
			policy: func(p *Policy) {
				p.Eligible = func(_, _ *api.JobInfo, v *api.TaskInfo) bool { return v.Name != "g-1" }
			},
		},
		"a gang with a task the plugins keep is not broken": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "4", 1, "n1"), member("g", "g-1", "4", 1, "n2"),
					high(),
				},
			},
			policy: func(p *Policy) { p.Narrow = without("g-1") },
		},
		"an unbreakable gang leaves room to the next candidate": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "2", 1, "n1"), notPreemptable(member("g", "g-1", "2", 1, "n2")),
					pod("mid", "2", 5, "n1"),
					high(),
				},
			},
			want: []string{"mid"},
		},
		"a gang the plugins would keep leaves room to the next candidate": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					member("g", "g-0", "2", 1, "n1"), member("g", "g-1", "2", 1, "n2"),
					pod("mid", "2", 5, "n1"),
					high(),
				},
			},
			policy: func(p *Policy) { p.Narrow = without("g-1") },
			want:   []string{"mid"},
		},
		"spared tasks a whole gang makes unnecessary stay": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "6"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{
					podGroup("g", 2, running), podGroup("s", 1, running),
				},
				Pods: []*corev1.Pod{
					member("g", "g-0", "2", 1, "n1"), member("g", "g-1", "2", 1, "n1"),
					member("s", "s-0", "2", 1, "n1"), member("s", "s-1", "2", 1, "n2"),
					pod("high", "4", 10, ""),
				},
			},
			want: []string{"g-0", "g-1"},
		},
		"the victims must pass the plugins as one": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{
					podGroup("g", 2, running),
				},
				Pods: []*corev1.Pod{
					member("g", "g-0", "2", 1, "n1"), member("g", "g-1", "2", 1, "n2"),
					pod("x", "2", 1, "n1"),
					pod("high", "4", 10, ""),
				},
			},
			// A budget of two victims: each step passes, the three together
			// do not.
			policy: func(p *Policy) {
				p.Narrow = func(_ *api.TaskInfo, c []*api.TaskInfo) []*api.TaskInfo { return c[:min(len(c), 2)] }
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ssn, _ := open(t, tc.objects, func(s *api.Snapshot) {
				if tc.edit != nil {
					tc.edit(t, s)
				}
			})
			p := lowerPriority()
			if tc.policy != nil {
				tc.policy(p)
			}
			job, preemptor := task(t, ssn.Snapshot, "high")
			c := chooseOn(ssn, job, preemptor, ssn.Snapshot.Nodes["n1"], p)
			var got []string
			if c != nil {
				got = names(c.Victims)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
		})
	}
}

// without is a Narrow that keeps the named task.
func without(kept string) func(*api.TaskInfo, []*api.TaskInfo) []*api.TaskInfo {
	return func(_ *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
		var out []*api.TaskInfo
		for _, c := range candidates {
			if c.Name != kept {
				out = append(out, c)
			}
		}
		return out
	}
}

// farFrom is a Distance that puts the named task at 1, every other at 0.
func farFrom(far string) func(_, v *api.TaskInfo) int {
	return func(_, v *api.TaskInfo) int {
		if v.Name == far {
			return 1
		}
		return 0
	}
}

// TestChoiceBetter: each key of the order decides against every key after
// it.
func TestChoiceBetter(t *testing.T) {
	early, late := now.Add(-time.Hour), now
	victims := func(n int) []*api.TaskInfo { return make([]*api.TaskInfo, n) }
	cases := map[string]struct{ better, worse Choice }{
		"nearer victims before fewer jobs": {
			better: Choice{distance: 0, jobs: 3},
			worse:  Choice{distance: 1, jobs: 1},
		},
		"fewer jobs before a less important top victim": {
			better: Choice{jobs: 1, top: 10},
			worse:  Choice{jobs: 2, top: 1},
		},
		"a less important top victim before fewer jobs just evicted from": {
			better: Choice{top: 1, again: 3},
			worse:  Choice{top: 5, again: 0},
		},
		"fewer jobs just evicted from before fewer victims": {
			better: Choice{again: 0, Victims: victims(3)},
			worse:  Choice{again: 1, Victims: victims(1)},
		},
		"fewer victims before later started ones": {
			better: Choice{Victims: victims(1), earliest: early},
			worse:  Choice{Victims: victims(2), earliest: late},
		},
		"later started victims before node order": {
			better: Choice{earliest: late, order: 5},
			worse:  Choice{earliest: early, order: 0},
		},
		"node order last": {
			better: Choice{order: 0},
			worse:  Choice{order: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.better.better(&tc.worse); got >= 0 {
				t.Errorf("better(better, worse) = %d, want < 0", got)
			}
			if got := tc.worse.better(&tc.better); got <= 0 {
				t.Errorf("better(worse, better) = %d, want > 0", got)
			}
		})
	}
}

// TestChoose: the node chosen for the pending pod "high" (priority 10),
// its victims, and the facts that rank it.
func TestChoose(t *testing.T) {
	type result struct {
		Node    string
		Victims []string
		Jobs    int
		Top     int32
		Again   int
		Next    int
	}
	cases := map[string]struct {
		objects    api.Objects
		edit       func(t *testing.T, s *api.Snapshot)
		candidates func(int) int
		start      int
		want       *result
	}{
		"the node whose victims touch the fewest jobs": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods: []*corev1.Pod{
					pod("a1", "2", 1, "n1"), pod("a2", "2", 1, "n1"),
					pod("b", "4", 1, "n2"),
					pod("high", "4", 10, ""),
				},
			},
			want: &result{Node: "n2", Victims: []string{"b"}, Jobs: 1, Top: 1},
		},
		"a whole gang counts as one job": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					pod("a1", "2", 1, "n1"), pod("a2", "2", 1, "n1"),
					member("g", "g-0", "2", 1, "n2"), member("g", "g-1", "2", 1, "n2"),
					pod("high", "4", 10, ""),
				},
			},
			want: &result{Node: "n2", Victims: []string{"g-0", "g-1"}, Jobs: 1, Top: 1},
		},
		"the node whose most important victim is least important": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods:  []*corev1.Pod{pod("mid", "4", 5, "n1"), pod("low", "4", 1, "n2"), pod("high", "4", 10, "")},
			},
			want: &result{Node: "n2", Victims: []string{"low"}, Jobs: 1, Top: 1},
		},
		"the node whose most important victim is least important, whatever the others": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods: []*corev1.Pod{
					pod("low", "2", 1, "n1"), pod("mid", "2", 5, "n1"),
					pod("a", "2", 3, "n2"), pod("b", "2", 3, "n2"),
					pod("high", "4", 10, ""),
				},
			},
			want: &result{Node: "n2", Victims: []string{"a", "b"}, Jobs: 2, Top: 3},
		},
		"the node whose victims' jobs were not evicted from lately": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods:  []*corev1.Pod{pod("a", "4", 1, "n1"), pod("b", "4", 1, "n2"), pod("high", "4", 10, "")},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				j, _ := task(t, s, "a")
				j.EvictedBy = map[api.JobID]time.Time{"ns/other": now.Add(-time.Minute)}
			},
			want: &result{Node: "n2", Victims: []string{"b"}, Jobs: 1, Top: 1},
		},
		"a node needing no victims from a job evicted lately, though it needs more victims": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{podGroup("g", 2, running)},
				Pods: []*corev1.Pod{
					pod("a", "4", 1, "n1"),
					member("g", "g-0", "2", 1, "n2"), member("g", "g-1", "2", 1, "n2"),
					pod("high", "4", 10, ""),
				},
			},
			edit: func(t *testing.T, s *api.Snapshot) {
				j, _ := task(t, s, "a")
				j.EvictedBy = map[api.JobID]time.Time{"ns/other": now.Add(-time.Minute)}
			},
			want: &result{Node: "n2", Victims: []string{"g-0", "g-1"}, Jobs: 1, Top: 1},
		},
		"the node whose victims started last": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods: []*corev1.Pod{
					createdAt(pod("old", "4", 1, "n1"), 0), createdAt(pod("young", "4", 1, "n2"), 30),
					pod("high", "4", 10, ""),
				},
			},
			want: &result{Node: "n2", Victims: []string{"young"}, Jobs: 1, Top: 1},
		},
		"the node whose longest-running victim started last": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods: []*corev1.Pod{
					createdAt(pod("a", "2", 1, "n1"), 0), createdAt(pod("b", "2", 1, "n1"), 20),
					createdAt(pod("c", "2", 1, "n2"), 10), createdAt(pod("d", "2", 1, "n2"), 15),
					pod("high", "4", 10, ""),
				},
			},
			want: &result{Node: "n2", Victims: []string{"d", "c"}, Jobs: 2, Top: 1},
		},
		"between equal nodes, the first visited from start": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods:  []*corev1.Pod{pod("a", "4", 1, "n1"), pod("b", "4", 1, "n2"), pod("high", "4", 10, "")},
			},
			start: 1,
			want:  &result{Node: "n2", Victims: []string{"b"}, Jobs: 1, Top: 1, Next: 1},
		},
		"enough candidate nodes end the search": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4"), node("n3", "4")},
				Pods: []*corev1.Pod{
					pod("mid", "4", 5, "n1"), pod("low", "4", 1, "n2"), pod("peer", "4", 10, "n3"),
					pod("high", "4", 10, ""),
				},
			},
			candidates: func(int) int { return 1 },
			want:       &result{Node: "n1", Victims: []string{"mid"}, Jobs: 1, Top: 5, Next: 1},
		},
		"nowhere": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("peer", "4", 10, "n1"), pod("high", "4", 10, "")},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ssn, _ := open(t, tc.objects, func(s *api.Snapshot) {
				if tc.edit != nil {
					tc.edit(t, s)
				}
			})
			p := lowerPriority()
			p.Candidates = tc.candidates
			job, preemptor := task(t, ssn.Snapshot, "high")
			c, next := Choose(ssn, job, preemptor, p, tc.start)
			var got *result
			if c != nil {
				got = &result{Node: c.Node.Name, Victims: names(c.Victims), Jobs: c.jobs, Top: c.top, Again: c.again, Next: next}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("choice (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestRestOfGang(t *testing.T) {
	tasks := func(ts ...*api.TaskInfo) *api.JobInfo {
		j := &api.JobInfo{Tasks: map[api.TaskID]*api.TaskInfo{}}
		for _, tk := range ts {
			tk.UID = api.TaskID(tk.Name)
			j.Tasks[tk.UID] = tk
		}
		return j
	}
	cases := map[string]struct {
		job    *api.JobInfo
		chosen []string
		want   []string
		wantOK bool
	}{
		"the other running and bound tasks, in name order": {
			job: tasks(
				&api.TaskInfo{Name: "v", Status: api.Running},
				&api.TaskInfo{Name: "c", Status: api.Running},
				&api.TaskInfo{Name: "b", Status: api.Bound},
				&api.TaskInfo{Name: "a", Status: api.Running},
			),
			want:   []string{"a", "b", "c"},
			wantOK: true,
		},
		"tasks already chosen are left out": {
			job: tasks(
				&api.TaskInfo{Name: "v", Status: api.Running},
				&api.TaskInfo{Name: "a", Status: api.Running},
				&api.TaskInfo{Name: "b", Status: api.Running},
			),
			chosen: []string{"a"},
			want:   []string{"b"},
			wantOK: true,
		},
		"tasks holding nothing are left out": {
			job: tasks(
				&api.TaskInfo{Name: "v", Status: api.Running},
				&api.TaskInfo{Name: "p", Status: api.Pending},
				&api.TaskInfo{Name: "r", Status: api.Releasing},
				&api.TaskInfo{Name: "s", Status: api.Succeeded},
				&api.TaskInfo{Name: "l", Status: api.Pipelined},
			),
			wantOK: true,
		},
		"a task held back by a refused eviction keeps the gang": {
			job: tasks(
				&api.TaskInfo{Name: "v", Status: api.Running},
				&api.TaskInfo{Name: "a", Status: api.Running},
				&api.TaskInfo{Name: "b", Status: api.Running, NoEvictUntil: now.Add(time.Minute)},
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			chosen := map[api.TaskID]bool{}
			for _, c := range tc.chosen {
				chosen[api.TaskID(c)] = true
			}
			rest, ok := restOfGang(tc.job, chosen, tc.job.Tasks["v"], now)
			if ok != tc.wantOK {
				t.Errorf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, names(rest)); diff != "" {
				t.Errorf("rest (-want,+got):\n%s", diff)
			}
		})
	}
}
