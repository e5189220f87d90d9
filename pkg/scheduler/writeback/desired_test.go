package writeback

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestDesiredPodGroupStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(1000, 0))
	t1 := metav1.NewTime(time.Unix(2000, 0))
	unsched := func(msg string, at metav1.Time) schedulingv1beta1.PodGroupCondition {
		return schedulingv1beta1.PodGroupCondition{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue,
			Reason: "NotEnoughResources", Message: msg, LastTransitionTime: at}
	}
	job := func(pg *schedulingv1beta1.PodGroup, running int) *api.JobInfo {
		pods := []*corev1.Pod{st.MakePod("ns", "p0").Group("pg").Req("cpu", "1").Obj(), st.MakePod("ns", "p1").Group("pg").Req("cpu", "1").Obj()}
		for i := range running {
			pods[i] = st.MakePod("ns", pods[i].Name).Group("pg").Req("cpu", "1").Node("n").Phase(corev1.PodRunning).Obj()
		}
		return api.Build(api.Objects{Pods: pods, PodGroups: []*schedulingv1beta1.PodGroup{pg}}).Jobs["ns/pg"]
	}
	pg := func(conds ...schedulingv1beta1.PodGroupCondition) *schedulingv1beta1.PodGroup {
		p := schedtesting.MakePodGroup("pg", "ns").MinMember(2).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
		p.Status.Conditions = conds
		return p
	}
	blocked := func(msg string) *framework.JobOutcome {
		return &framework.JobOutcome{Blockers: []*framework.Reason{framework.Reasonf("NotEnoughResources", "%s", msg)}}
	}
	cases := map[string]struct {
		job     *api.JobInfo
		outcome *framework.JobOutcome
		want    schedulingv1beta1.PodGroupStatus
	}{
		"first reason": {
			job: job(pg(), 0), outcome: blocked("1 of 2 tasks placeable"),
			want: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupInqueue,
				Conditions: []schedulingv1beta1.PodGroupCondition{unsched("1 of 2 tasks placeable", t1)}},
		},
		"new message keeps the transition time": {
			job: job(pg(unsched("1 of 2 tasks placeable", t0)), 0), outcome: blocked("0 of 2 tasks placeable"),
			want: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupInqueue,
				Conditions: []schedulingv1beta1.PodGroupCondition{unsched("0 of 2 tasks placeable", t0)}},
		},
		"placed job is Running and Scheduled": {
			job: job(pg(unsched("1 of 2 tasks placeable", t0)), 2),
			want: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning, Running: 2,
				Conditions: []schedulingv1beta1.PodGroupCondition{
					{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionFalse, Reason: ScheduledReason, LastTransitionTime: t1},
					{Type: schedulingv1beta1.PodGroupScheduled, Status: corev1.ConditionTrue, Reason: ScheduledReason,
						Message: "enough tasks of the gang are placed to start it", LastTransitionTime: t1},
				}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DesiredPodGroupStatus(tc.job, tc.outcome, t1)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodGroupHold(t *testing.T) {
	status := func(phase schedulingv1beta1.PodGroupPhase, running int32, conds ...schedulingv1beta1.PodGroupCondition) schedulingv1beta1.PodGroupStatus {
		return schedulingv1beta1.PodGroupStatus{Phase: phase, Running: running, Conditions: conds}
	}
	unschedulable := schedulingv1beta1.PodGroupCondition{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue, Reason: "NotEnoughResources"}
	cleared := schedulingv1beta1.PodGroupCondition{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionFalse, Reason: ScheduledReason}
	scheduled := schedulingv1beta1.PodGroupCondition{Type: schedulingv1beta1.PodGroupScheduled, Status: corev1.ConditionTrue, Reason: ScheduledReason}
	cases := map[string]struct {
		cur, desired schedulingv1beta1.PodGroupStatus
		in           HoldInput
		want         time.Duration
	}{
		"admitted without its pods: a job controller creates them": {
			cur: status("", 0), desired: status(schedulingv1beta1.PodGroupInqueue, 0), in: HoldInput{PodsMissing: true, QueueOpen: true}, want: 0,
		},
		"admitted with its pods: waits for its placement": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupInqueue, 0), in: HoldInput{QueueOpen: true}, want: StartHold,
		},
		"admitted with its pods into a closing queue": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupInqueue, 0), want: 0,
		},
		"admitted with its pods, unschedulable": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupInqueue, 0, unschedulable), in: HoldInput{QueueOpen: true}, want: 0,
		},
		"placed after its admission, pods not started": {
			cur: status(schedulingv1beta1.PodGroupInqueue, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 3, QueueOpen: true}, want: StartHold,
		},
		"placed after its admission, binds in flight": {
			cur: status(schedulingv1beta1.PodGroupInqueue, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 3, Binding: 2, QueueOpen: true}, want: UntilBound,
		},
		"placed as it was admitted, binds in flight": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 1, Binding: 1, QueueOpen: true}, want: UntilBound,
		},
		"placed as it was admitted, binds in flight, in a closing queue": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 1, Binding: 1}, want: 0,
		},
		"running, more pods placed": {
			cur: status(schedulingv1beta1.PodGroupRunning, 2, scheduled), desired: status(schedulingv1beta1.PodGroupRunning, 2, scheduled), in: HoldInput{Unstarted: 1, Binding: 1, QueueOpen: true}, want: SettleHold,
		},
		"placed as it was admitted, pods not started": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 1, QueueOpen: true}, want: StartHold,
		},
		"placed, no status yet, pods not started": {
			cur: status("", 0), desired: status(schedulingv1beta1.PodGroupRunning, 1, scheduled), in: HoldInput{Unstarted: 1, QueueOpen: true}, want: StartHold,
		},
		"placed as it was admitted, in a closing queue": {
			cur: status(schedulingv1beta1.PodGroupPending, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 1}, want: 0,
		},
		"placed after its admission, in a closing queue: Inqueue counted already": {
			cur: status(schedulingv1beta1.PodGroupInqueue, 0), desired: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), in: HoldInput{Unstarted: 1}, want: StartHold,
		},
		"placed, its pods all started": {
			cur: status(schedulingv1beta1.PodGroupInqueue, 0), desired: status(schedulingv1beta1.PodGroupRunning, 3, scheduled), in: HoldInput{QueueOpen: true}, want: 0,
		},
		"a broken gang whole again": {
			cur: status(schedulingv1beta1.PodGroupUnknown, 1), desired: status(schedulingv1beta1.PodGroupRunning, 1, scheduled), in: HoldInput{Unstarted: 1, QueueOpen: true}, want: 0,
		},
		"a running gang broken: its job controller reacts": {
			cur: status(schedulingv1beta1.PodGroupRunning, 2), desired: status(schedulingv1beta1.PodGroupUnknown, 1), in: HoldInput{Unstarted: 1, QueueOpen: true}, want: 0,
		},
		"unschedulable": {
			cur: status(schedulingv1beta1.PodGroupInqueue, 0), desired: status(schedulingv1beta1.PodGroupInqueue, 0, unschedulable), in: HoldInput{QueueOpen: true}, want: 0,
		},
		"still unschedulable, counts moved": {
			cur: status(schedulingv1beta1.PodGroupInqueue, 0, unschedulable), desired: status(schedulingv1beta1.PodGroupInqueue, 1, unschedulable), in: HoldInput{QueueOpen: true}, want: 0,
		},
		"pods starting": {
			cur: status(schedulingv1beta1.PodGroupRunning, 0, scheduled), desired: status(schedulingv1beta1.PodGroupRunning, 1, scheduled), in: HoldInput{Unstarted: 1, QueueOpen: true}, want: SettleHold,
		},
		"a condition cleared, phase unchanged": {
			cur: status(schedulingv1beta1.PodGroupRunning, 2, unschedulable), desired: status(schedulingv1beta1.PodGroupRunning, 2, cleared), in: HoldInput{QueueOpen: true}, want: SettleHold,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := PodGroupHold(tc.cur, tc.desired, tc.in); got != tc.want {
				t.Errorf("PodGroupHold = %s, want %s", got, tc.want)
			}
		})
	}
}
