package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestResourceArithmetic(t *testing.T) {
	a := NewResource(rl("cpu", "1500m", "memory", "2Gi", "nvidia.com/gpu", "2"))
	b := NewResource(rl("cpu", "500m", "nvidia.com/gpu", "1", "pods", "1"))
	sum := a.Clone().Add(b)
	if got, want := sum.String(), "cpu 2, memory 2Gi, nvidia.com/gpu 3, pods 1"; got != want {
		t.Errorf("a+b = %q, want %q", got, want)
	}
	diff := a.Clone().Sub(b)
	if got, want := diff.String(), "cpu 1, memory 2Gi, nvidia.com/gpu 1, pods -1"; got != want {
		t.Errorf("a-b = %q, want %q", got, want)
	}
	if !sum.Clone().Sub(b).Equal(a) {
		t.Errorf("(a+b)-b != a")
	}
	if a.Equal(b) {
		t.Errorf("a == b")
	}
	if got := a.Get("nvidia.com/gpu"); got != 2000 {
		t.Errorf("gpu in milli-units = %d, want 2000", got)
	}
}

func TestResourceComparison(t *testing.T) {
	cases := map[string]struct {
		r, o         corev1.ResourceList
		lessEqual    bool
		insufficient []corev1.ResourceName
	}{
		"fits": {
			r: rl("cpu", "1", "memory", "1Gi"), o: rl("cpu", "2", "memory", "1Gi"),
			lessEqual: true,
		},
		"cpu short": {
			r: rl("cpu", "3", "memory", "1Gi"), o: rl("cpu", "2", "memory", "4Gi"),
			insufficient: []corev1.ResourceName{"cpu"},
		},
		"extended resource absent on the other side": {
			r: rl("cpu", "1", "nvidia.com/gpu", "1"), o: rl("cpu", "2"),
			insufficient: []corev1.ResourceName{"nvidia.com/gpu"},
		},
		"zero request of an absent resource fits": {
			r: rl("cpu", "1", "nvidia.com/gpu", "0"), o: rl("cpu", "2"),
			lessEqual: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, o := NewResource(tc.r), NewResource(tc.o)
			if got := r.LessEqual(o); got != tc.lessEqual {
				t.Errorf("LessEqual = %v, want %v", got, tc.lessEqual)
			}
			if diff := cmp.Diff(tc.insufficient, r.Insufficient(o)); diff != "" {
				t.Errorf("Insufficient (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestResourceLessEqualInIgnoresUncappedResources(t *testing.T) {
	capability := NewResource(rl("nvidia.com/gpu", "4"))
	capped := func(n corev1.ResourceName) bool { return n == "nvidia.com/gpu" }
	if !NewResource(rl("cpu", "100", "nvidia.com/gpu", "4")).LessEqualIn(capability, capped) {
		t.Errorf("a request within the GPU cap is rejected because of uncapped CPU")
	}
	if NewResource(rl("cpu", "1", "nvidia.com/gpu", "5")).LessEqualIn(capability, capped) {
		t.Errorf("a request above the GPU cap is accepted")
	}
}

// TestResourceString: amounts of bytes read as quantities, not as counts
// of bytes.
func TestResourceString(t *testing.T) {
	cases := map[string]struct {
		in   corev1.ResourceList
		want string
	}{
		"memory in binary units":  {in: rl("memory", "512Mi"), want: "memory 512Mi"},
		"memory in decimal units": {in: rl("memory", "1G"), want: "memory 1G"},
		"ephemeral storage":       {in: rl("cpu", "2", "ephemeral-storage", "16Gi"), want: "cpu 2, ephemeral-storage 16Gi"},
		"huge pages":              {in: rl("hugepages-2Mi", "1Gi"), want: "hugepages-2Mi 1Gi"},
		"GPU memory counts MiB":   {in: rl("volcano.sh/gpu-memory", "16384"), want: "volcano.sh/gpu-memory 16384"},
		"fractions":               {in: rl("cpu", "250m", "nvidia.com/gpu", "500m"), want: "cpu 250m, nvidia.com/gpu 500m"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NewResource(tc.in).String()); diff != "" {
				t.Errorf("String (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestResourceListRoundTrip(t *testing.T) {
	in := rl("cpu", "250m", "memory", "1Gi", "nvidia.com/gpu", "1")
	out := NewResource(in).ResourceList()
	for name, q := range in {
		got := out[name]
		if got.Cmp(q) != 0 {
			t.Errorf("%s: got %s, want %s", name, got.String(), q.String())
		}
	}
}

func TestShare(t *testing.T) {
	total := NewResource(rl("cpu", "100", "memory", "400Gi", "nvidia.com/gpu", "8", "pods", "1000"))
	cases := map[string]struct {
		r    corev1.ResourceList
		want float64
	}{
		"cpu dominates":         {rl("cpu", "50", "memory", "100Gi"), 0.5},
		"gpu dominates":         {rl("cpu", "1", "nvidia.com/gpu", "4"), 0.5},
		"pods do not count":     {rl("pods", "1000"), 0},
		"missing resource full": {rl("example.com/fpga", "1"), 1},
		"nothing":               {rl(), 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NewResource(tc.r).Share(total); got != tc.want {
				t.Errorf("share = %v, want %v", got, tc.want)
			}
		})
	}
}
