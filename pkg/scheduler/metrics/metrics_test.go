package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/binder"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

func TestMetricsFollowCyclesAndBinds(t *testing.T) {
	m := New()
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	res := api.NewResource(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), "nvidia.com/gpu": resource.MustParse("2")})
	m.ObserveCycle(scheduler.CycleStats{
		Duration: 5 * time.Millisecond, ActionDurations: map[string]time.Duration{"allocate": time.Millisecond},
		PluginDurations: map[string]time.Duration{"proportion": time.Millisecond},
		Unschedulable:   2, UnschedulableTasks: 7,
		Pending: map[scheduler.PendingKey]int{{Queue: "team-a", Reason: "NotEnoughResources"}: 2},
		Queues:  map[api.QueueID]framework.QueueReport{"team-a": {Allocated: res, Deserved: res, Capability: res, Share: 0.5}},
	})
	m.ObserveBind(binder.Result{})
	m.ObserveBind(binder.Result{Err: errors.New("conflict")})
	m.ObserveBind(binder.Result{Err: binder.ErrGangAborted})

	want := `
# HELP caldera_scheduler_pending_jobs Jobs the last cycle could not place or admit, by queue and by the type of what blocks them first (the reason of their PodGroup's Unschedulable condition).
# TYPE caldera_scheduler_pending_jobs gauge
caldera_scheduler_pending_jobs{queue="team-a",reason="NotEnoughResources"} 2
# HELP volcano_queue_allocated_milli_cpu Each queue's allocated millicores, as the queue plugin computed it.
# TYPE volcano_queue_allocated_milli_cpu gauge
volcano_queue_allocated_milli_cpu{queue_name="team-a"} 3000
# HELP volcano_queue_deserved_scalar_resources Each queue's deserved amount of resources other than cpu and memory (milli-units).
# TYPE volcano_queue_deserved_scalar_resources gauge
volcano_queue_deserved_scalar_resources{queue_name="team-a",resource="nvidia.com/gpu"} 2000
# HELP volcano_schedule_attempts_total Binds attempted, by result: scheduled, error, or aborted (dropped with a failed gang).
# TYPE volcano_schedule_attempts_total counter
volcano_schedule_attempts_total{result="aborted"} 1
volcano_schedule_attempts_total{result="error"} 1
volcano_schedule_attempts_total{result="scheduled"} 1
# HELP volcano_unschedule_task_count Pending tasks of the jobs the last cycle could not place or admit.
# TYPE volcano_unschedule_task_count gauge
volcano_unschedule_task_count 7
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"caldera_scheduler_pending_jobs", "volcano_queue_allocated_milli_cpu", "volcano_queue_deserved_scalar_resources", "volcano_schedule_attempts_total", "volcano_unschedule_task_count"); err != nil {
		t.Error(err)
	}

	// A queue that is gone disappears from the next cycle's series.
	m.ObserveCycle(scheduler.CycleStats{})
	if n := testutil.CollectAndCount(reg, "volcano_queue_share"); n != 0 {
		t.Errorf("%d volcano_queue_share series after the queue went away, want 0", n)
	}
	if n := testutil.CollectAndCount(reg, "caldera_scheduler_pending_jobs"); n != 0 {
		t.Errorf("%d caldera_scheduler_pending_jobs series after the jobs went, want 0", n)
	}
}
