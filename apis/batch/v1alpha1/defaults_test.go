package v1alpha1_test

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchtesting "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
)

func TestSetDefaultsJob(t *testing.T) {
	// defaulted is a job whose job-level fields are already defaulted, so a
	// case only spells out what it is about.
	defaulted := func() *batchtesting.JobWrapper {
		return batchtesting.MakeJob("j", "ns").Queue("default").SchedulerName("volcano").MaxRetry(3)
	}

	cases := map[string]struct {
		job  *batchv1alpha1.Job
		want *batchv1alpha1.Job
	}{
		"empty job-level fields get Volcano's defaults": {
			job: batchtesting.MakeJob("j", "ns").
				Task(batchtesting.MakeTask("worker", 2)).Obj(),
			want: batchtesting.MakeJob("j", "ns").Queue("default").SchedulerName("volcano").MaxRetry(3).MinAvailable(2).
				Task(batchtesting.MakeTask("worker", 2).MinAvailable(2).MaxRetry(3)).Obj(),
		},
		"set fields are kept": {
			job: batchtesting.MakeJob("j", "ns").Queue("q").SchedulerName("other").MaxRetry(5).MinAvailable(1).
				Task(batchtesting.MakeTask("worker", 2).MinAvailable(1).MaxRetry(7)).Obj(),
			want: batchtesting.MakeJob("j", "ns").Queue("q").SchedulerName("other").MaxRetry(5).MinAvailable(1).
				Task(batchtesting.MakeTask("worker", 2).MinAvailable(1).MaxRetry(7)).Obj(),
		},
		"unnamed tasks are named default<index>": {
			job: defaulted().
				Task(batchtesting.MakeTask("", 1)).
				Task(batchtesting.MakeTask("ps", 1)).
				Task(batchtesting.MakeTask("", 1)).Obj(),
			want: defaulted().MinAvailable(3).
				Task(batchtesting.MakeTask("default0", 1).MinAvailable(1).MaxRetry(3)).
				Task(batchtesting.MakeTask("ps", 1).MinAvailable(1).MaxRetry(3)).
				Task(batchtesting.MakeTask("default2", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
		"job minAvailable is the sum of task minAvailable, unset ones counting as replicas": {
			job: defaulted().
				Task(batchtesting.MakeTask("a", 4).MinAvailable(2)).
				Task(batchtesting.MakeTask("b", 3)).Obj(),
			want: defaulted().MinAvailable(5).
				Task(batchtesting.MakeTask("a", 4).MinAvailable(2).MaxRetry(3)).
				Task(batchtesting.MakeTask("b", 3).MinAvailable(3).MaxRetry(3)).Obj(),
		},
		"task minAvailable 0 is kept, it is set": {
			job: defaulted().MinAvailable(1).
				Task(batchtesting.MakeTask("a", 4).MinAvailable(0)).Obj(),
			want: defaulted().MinAvailable(1).
				Task(batchtesting.MakeTask("a", 4).MinAvailable(0).MaxRetry(3)).Obj(),
		},
		"partitioned task needs its minimum partitions": {
			job: defaulted().
				Task(batchtesting.MakeTask("a", 9).Partition(3, 3, 2)).
				Task(batchtesting.MakeTask("b", 4).Partition(2, 2, 0)).Obj(),
			want: func() *batchv1alpha1.Job {
				j := defaulted().MinAvailable(6).
					Task(batchtesting.MakeTask("a", 9).Partition(3, 3, 2).MinAvailable(6).MaxRetry(3)).
					Task(batchtesting.MakeTask("b", 4).Partition(2, 2, 0).MinAvailable(0).MaxRetry(3)).Obj()
				return j
			}(),
		},
		"host network task gets ClusterFirstWithHostNet DNS": {
			job: defaulted().MinAvailable(1).
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3).HostNetwork()).Obj(),
			want: func() *batchv1alpha1.Job {
				j := defaulted().MinAvailable(1).
					Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3).HostNetwork()).Obj()
				j.Spec.Tasks[0].Template.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
				return j
			}(),
		},
		"host network task keeps its own DNS policy": {
			job: func() *batchv1alpha1.Job {
				j := defaulted().MinAvailable(1).
					Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3).HostNetwork()).Obj()
				j.Spec.Tasks[0].Template.Spec.DNSPolicy = corev1.DNSDefault
				return j
			}(),
			want: func() *batchv1alpha1.Job {
				j := defaulted().MinAvailable(1).
					Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3).HostNetwork()).Obj()
				j.Spec.Tasks[0].Template.Spec.DNSPolicy = corev1.DNSDefault
				return j
			}(),
		},
		"mpi plugin brings svc and ssh": {
			job: defaulted().MinAvailable(1).Plugin("mpi", "--master=m").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
			want: defaulted().MinAvailable(1).Plugin("mpi", "--master=m").Plugin("svc").Plugin("ssh").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
		"tensorflow and pytorch plugins bring svc, keeping its arguments": {
			job: defaulted().MinAvailable(1).Plugin("tensorflow").Plugin("pytorch").Plugin("svc", "--publish-not-ready-addresses=false").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
			want: defaulted().MinAvailable(1).Plugin("tensorflow").Plugin("pytorch").Plugin("svc", "--publish-not-ready-addresses=false").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
		"ray plugin brings svc": {
			job: defaulted().MinAvailable(1).Plugin("ray").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
			want: defaulted().MinAvailable(1).Plugin("ray").Plugin("svc").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
		"pytorch plugin alone brings svc only": {
			job: defaulted().MinAvailable(1).Plugin("pytorch").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
			want: defaulted().MinAvailable(1).Plugin("pytorch").Plugin("svc").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
		"other plugins bring nothing": {
			job: defaulted().MinAvailable(1).Plugin("env").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
			want: defaulted().MinAvailable(1).Plugin("env").
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
		"network topology mode defaults to hard, for the job and each partition": {
			job: func() *batchv1alpha1.Job {
				j := defaulted().MinAvailable(4).
					NetworkTopology(schedulingv1beta1.NetworkTopologySpec{HighestTierAllowed: ptr.To[int32](2)}).
					Task(batchtesting.MakeTask("a", 4).MinAvailable(4).MaxRetry(3).Partition(2, 2, 0)).Obj()
				j.Spec.Tasks[0].PartitionPolicy.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{HighestTierName: "rack"}
				return j
			}(),
			want: func() *batchv1alpha1.Job {
				j := defaulted().MinAvailable(4).
					NetworkTopology(schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: ptr.To[int32](2)}).
					Task(batchtesting.MakeTask("a", 4).MinAvailable(4).MaxRetry(3).Partition(2, 2, 0)).Obj()
				j.Spec.Tasks[0].PartitionPolicy.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierName: "rack"}
				return j
			}(),
		},
		"soft network topology is kept": {
			job: defaulted().MinAvailable(1).
				NetworkTopology(schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode}).
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
			want: defaulted().MinAvailable(1).
				NetworkTopology(schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode}).
				Task(batchtesting.MakeTask("a", 1).MinAvailable(1).MaxRetry(3)).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.job.DeepCopy()
			batchv1alpha1.SetDefaults_Job(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_Job (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			batchv1alpha1.SetDefaults_Job(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("SetDefaults_Job is not idempotent (-first,+second):\n%s", diff)
			}
		})
	}
}
