package pod_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/pod"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

const (
	groupKey = schedulingv1beta1.KubeGroupNameAnnotation
	queueKey = schedulingv1beta1.QueueNameAnnotation
)

func objects() []client.Object {
	return []client.Object{
		testingsched.MakeQueue("root").Obj(),
		testingsched.MakeQueue("default").State(schedulingv1beta1.QueueStateOpen).Obj(),
		testingsched.MakeQueue("closed").State(schedulingv1beta1.QueueStateClosed).Obj(),
		testingsched.MakePodGroup("pg", "ns").Queue("default").Obj(),
		testingsched.MakePodGroup("pg-closed", "ns").Queue("closed").Obj(),
	}
}

func TestValidateCreate(t *testing.T) {
	cases := map[string]struct {
		pod    *corev1.Pod
		reader func(t *testing.T) lookup.Reader
		want   []metav1.StatusCause
	}{
		"pod of another scheduler is not checked": {
			pod: st.MakePod("ns", "p").SchedulerName("default-scheduler").Annotation(queueKey, "nope").Obj(),
		},
		"pod without group or queue": {
			pod: st.MakePod("ns", "p").Obj(),
		},
		"pod of a PodGroup in an open queue": {
			pod: st.MakePod("ns", "p").Annotation(groupKey, "pg").Obj(),
		},
		"pod sharing a GPU card in one container and taking whole cards in another": {
			pod: st.MakePod("ns", "p").Container("share", "volcano.sh/gpu-memory", "4000").Container("whole", "volcano.sh/gpu-number", "1").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.containers[2].resources.limits[volcano.sh/gpu-number]",
				`Invalid value: "1": the pod also asks for volcano.sh/gpu-memory (spec.containers[1].resources.limits[volcano.sh/gpu-memory]): a pod shares one GPU card or takes whole cards, not both`)},
		},
		"pod sharing a GPU card": {
			pod: st.MakePod("ns", "p").Container("share", "volcano.sh/gpu-memory", "4000").Obj(),
		},
		"pod of a PodGroup that does not exist": {
			pod:  st.MakePod("ns", "p").Annotation(groupKey, "nope").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[scheduling.k8s.io/group-name]", `Invalid value: "nope": PodGroup does not exist in namespace ns`)},
		},
		"pod of a PodGroup the cache has not seen yet": {
			pod: st.MakePod("ns", "p").Annotation(groupKey, "new").Obj(),
			reader: func(t *testing.T) lookup.Reader {
				return wt.StaleReader(t, objects(), append(objects(), testingsched.MakePodGroup("new", "ns").Queue("default").Obj()))
			},
		},
		"pod of a PodGroup in a closed queue": {
			pod: st.MakePod("ns", "p").Annotation(groupKey, "pg-closed").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[scheduling.k8s.io/group-name]",
				`Invalid value: "pg-closed": the PodGroup's queue "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"Volcano's spelling of the group annotation": {
			pod: st.MakePod("ns", "p").Annotation(schedulingv1beta1.GroupNameAnnotation, "pg-closed").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[scheduling.volcano.sh/group-name]",
				`Invalid value: "pg-closed": the PodGroup's queue "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"pod naming a closed queue": {
			pod: st.MakePod("ns", "p").Annotation(queueKey, "closed").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[scheduling.volcano.sh/queue-name]",
				`Invalid value: "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"pod naming a queue that does not exist": {
			pod: st.MakePod("ns", "p").Annotation(queueKey, "nope").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[scheduling.volcano.sh/queue-name]",
				`Invalid value: "nope": queue does not exist; existing queues: closed, default`)},
		},
		"the PodGroup's queue wins over the pod's": {
			pod: st.MakePod("ns", "p").Annotation(groupKey, "pg").Annotation(queueKey, "closed").Obj(),
		},
		"a preemptable annotation that is not a boolean": {
			pod: st.MakePod("ns", "p").Annotation(schedulingv1beta1.PreemptableKey, "no").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[volcano.sh/preemptable]",
				`Invalid value: "no": must be true or false`)},
		},
		"a cooldown label that is not a duration": {
			pod: st.MakePod("ns", "p").Label(schedulingv1beta1.CooldownTimeKey, "600").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.labels[volcano.sh/cooldown-time]",
				`Invalid value: "600": must be a positive duration such as "600s" or "10m"`)},
		},
		"a negative cooldown": {
			pod: st.MakePod("ns", "p").Annotation(schedulingv1beta1.CooldownTimeKey, "-5m").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "metadata.annotations[volcano.sh/cooldown-time]",
				`Invalid value: "-5m": must be a positive duration such as "600s" or "10m"`)},
		},
		"protection keys spelled right": {
			pod: st.MakePod("ns", "p").Annotation(schedulingv1beta1.PreemptableKey, "false").Label(schedulingv1beta1.CooldownTimeKey, "10m").Obj(),
		},
		"two disruption budgets": {
			pod: st.MakePod("ns", "p").Annotation(schedulingv1beta1.JDBMinAvailableKey, "1").Annotation(schedulingv1beta1.JDBMaxUnavailableKey, "20%").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Forbidden, "metadata.annotations[volcano.sh/jdb-max-unavailable]",
				"Forbidden: must not be set together with volcano.sh/jdb-min-available: a pod has one disruption budget")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reader := wt.Reader(t, objects()...)
			if tc.reader != nil {
				reader = tc.reader(t)
			}
			_, err := pod.NewWebhook(reader, []string{"volcano"}).ValidateCreate(t.Context(), tc.pod)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateBudgetAnnotations(t *testing.T) {
	path := field.NewPath("metadata", "annotations")
	cases := map[string]struct {
		value string
		ok    bool
	}{
		"count":               {value: "2", ok: true},
		"percentage":          {value: "50%", ok: true},
		"smallest percentage": {value: "1%", ok: true},
		"largest percentage":  {value: "99%", ok: true},
		"zero":                {value: "0"},
		"negative":            {value: "-1"},
		"zero percent":        {value: "0%"},
		"all of them":         {value: "100%"},
		"not a number":        {value: "half"},
		"fraction":            {value: "1.5"},
		"empty":               {value: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := pod.ValidateBudgetAnnotations(map[string]string{schedulingv1beta1.JDBMinAvailableKey: tc.value}, path)
			if got := len(errs) == 0; got != tc.ok {
				t.Errorf("ValidateBudgetAnnotations(%q) = %v, want ok=%v", tc.value, errs, tc.ok)
			}
		})
	}
}
