package command_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	testingbus "github.com/caldera-sh/caldera/apis/bus/v1alpha1/testing"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/command"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func objects() []client.Object {
	j := testingbatch.MakeJob("train", "ns").Task(testingbatch.MakeTask("t", 1)).Obj()
	j.UID = "job-uid"
	return []client.Object{j, testingsched.MakeQueue("team-a").Obj()}
}

func TestValidateCreate(t *testing.T) {
	cases := map[string]struct {
		cmd  *busv1alpha1.Command
		want []metav1.StatusCause
	}{
		"abort a job": {
			cmd: testingbus.MakeCommand("c", "ns", busv1alpha1.AbortJobAction).TargetJob("train").TargetUID("job-uid").Obj(),
		},
		"close a queue": {
			cmd: testingbus.MakeCommand("c", "ns", busv1alpha1.CloseQueueAction).TargetQueue("team-a").Obj(),
		},
		"no action and no target": {
			cmd: testingbus.MakeCommand("c", "ns", "").Obj(),
			want: []metav1.StatusCause{
				wt.Cause(wt.Required, "action", "Required value: the action to take on the target"),
				wt.Cause(wt.Required, "target", "Required value: the Job or Queue the command is for"),
			},
		},
		"a queue action for a job": {
			cmd: testingbus.MakeCommand("c", "ns", busv1alpha1.OpenQueueAction).TargetJob("train").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.NotSupported, "action",
				`Unsupported value: "OpenQueue": supported values: "AbortJob", "CompleteJob", "RestartJob", "RestartPod", "RestartTask", "ResumeJob", "TerminateJob"`)},
		},
		"a kind no controller takes commands for": {
			cmd:  testingbus.MakeCommand("c", "ns", busv1alpha1.RestartJobAction).Target("apps/v1", "Deployment", "web").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.NotSupported, "target.kind", `Unsupported value: "Deployment": supported values: "Job", "Queue"`)},
		},
		"a Job of another API group": {
			cmd:  testingbus.MakeCommand("c", "ns", busv1alpha1.AbortJobAction).Target("batch/v1", "Job", "train").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "target.apiVersion", `Invalid value: "batch/v1": a Job is in API group batch.volcano.sh`)},
		},
		"a job that does not exist": {
			cmd:  testingbus.MakeCommand("c", "other", busv1alpha1.AbortJobAction).TargetJob("train").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "target.name", `Invalid value: "train": Job does not exist in namespace other`)},
		},
		"a queue that does not exist": {
			cmd:  testingbus.MakeCommand("c", "ns", busv1alpha1.OpenQueueAction).TargetQueue("nope").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "target.name", `Invalid value: "nope": Queue does not exist`)},
		},
		"a job that was replaced": {
			cmd: testingbus.MakeCommand("c", "ns", busv1alpha1.ResumeJobAction).TargetJob("train").TargetUID("old-uid").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "target.uid",
				`Invalid value: "old-uid": is not the uid of Job train (job-uid): the command is for an object that was deleted`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := command.NewWebhook(wt.Reader(t, objects()...)).ValidateCreate(t.Context(), tc.cmd)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
		})
	}
}
