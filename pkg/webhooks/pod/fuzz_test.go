package pod_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/quantity"
	"github.com/caldera-sh/caldera/pkg/webhooks/pod"
)

// FuzzValidateBudgetAnnotations checks the disruption budget annotations of
// arbitrary values: nothing panics, the verdict is deterministic, and a
// value is accepted exactly when it is a positive integer or 1% to 99%.
func FuzzValidateBudgetAnnotations(f *testing.F) {
	for _, v := range []string{"1", "0", "-1", "50%", "100%", "0%", "1.5", "", "%", "99%", "+5", " 5"} {
		f.Add(v, "")
		f.Add("", v)
	}
	path := field.NewPath("metadata", "annotations")
	f.Fuzz(func(t *testing.T, minAvailable, maxUnavailable string) {
		annotations := map[string]string{}
		if minAvailable != "" {
			annotations[schedulingv1beta1.JDBMinAvailableKey] = minAvailable
		}
		if maxUnavailable != "" {
			annotations[schedulingv1beta1.JDBMaxUnavailableKey] = maxUnavailable
		}
		first := pod.ValidateBudgetAnnotations(annotations, path)
		if second := pod.ValidateBudgetAnnotations(annotations, path); !reflect.DeepEqual(first, second) {
			t.Fatalf("not deterministic:\n%v\n%v", first, second)
		}
		if minAvailable != "" && maxUnavailable == "" {
			if got, want := len(first) == 0, budgetOK(minAvailable); got != want {
				t.Fatalf("%q accepted=%v, want %v", minAvailable, got, want)
			}
		}
	})
}

// budgetOK is the rule, written independently of the implementation.
func budgetOK(v string) bool {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		n, err := strconv.Atoi(p)
		return err == nil && n >= 1 && n <= 99
	}
	n, err := strconv.Atoi(v)
	return err == nil && n >= 1
}

// FuzzValidatePreemptionKeys checks the preemption protection keys of
// arbitrary values: nothing panics, and a value is accepted exactly when
// volcano.sh/preemptable is a boolean and volcano.sh/cooldown-time a
// positive duration, as the scheduler reads them.
func FuzzValidatePreemptionKeys(f *testing.F) {
	for _, v := range []string{"true", "false", "True", "1", "no", "", "10m", "600s", "-5m", "0s", "1h30m", "600"} {
		f.Add(v, v)
	}
	path := field.NewPath("metadata", "annotations")
	f.Fuzz(func(t *testing.T, preemptable, cooldown string) {
		errs := pod.ValidatePreemptionKeys(map[string]string{
			schedulingv1beta1.PreemptableKey:  preemptable,
			schedulingv1beta1.CooldownTimeKey: cooldown,
		}, path)
		_, boolErr := strconv.ParseBool(preemptable)
		d, durErr := time.ParseDuration(cooldown)
		want := 0
		if boolErr != nil {
			want++
		}
		if durErr != nil || d <= 0 {
			want++
		}
		if len(errs) != want {
			t.Fatalf("preemptable %q, cooldown %q: %d errors (%v), want %d", preemptable, cooldown, len(errs), errs, want)
		}
	})
}

// FuzzValidateGPURequests checks pods of two containers with arbitrary
// GPU-sharing quantities in limits or requests: nothing panics, the verdict
// is deterministic, and a pod is refused exactly when some container asks
// for a share of a card and some (the same or another) for whole cards.
func FuzzValidateGPURequests(f *testing.F) {
	for _, q := range []string{"", "0", "1", "4000", "0.5", "1k", "-1", "x"} {
		f.Add(q, "", true, false)
		f.Add(q, "1", false, true)
	}
	path := field.NewPath("spec")
	f.Fuzz(func(t *testing.T, memory, number string, memoryInLimits, numberInFirst bool) {
		// quantity.Parse, not resource.ParseQuantity: the latter computes
		// without end on some exponents (6E1000000000000), which the API
		// server would not get past either.
		memQ, memErr := quantity.Parse(memory)
		numQ, numErr := quantity.Parse(number)
		spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}
		if memErr == nil {
			rl := corev1.ResourceList{schedulingv1beta1.GPUMemoryResource: memQ}
			if memoryInLimits {
				spec.Containers[0].Resources.Limits = rl
			} else {
				spec.Containers[0].Resources.Requests = rl
			}
		}
		if numErr == nil {
			c := &spec.Containers[1]
			if numberInFirst {
				c = &spec.Containers[0]
			}
			if c.Resources.Limits == nil {
				c.Resources.Limits = corev1.ResourceList{}
			}
			c.Resources.Limits[schedulingv1beta1.GPUNumberResource] = numQ
		}
		first := pod.ValidateGPURequests(spec, path)
		if second := pod.ValidateGPURequests(spec, path); !reflect.DeepEqual(first, second) {
			t.Fatalf("not deterministic:\n%v\n%v", first, second)
		}
		both := memErr == nil && !memQ.IsZero() && numErr == nil && !numQ.IsZero()
		if got := len(first) > 0; got != both {
			t.Fatalf("memory %q, number %q: refused=%v, want %v (%v)", memory, number, got, both, first)
		}
	})
}
