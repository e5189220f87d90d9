package quantity_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/quantity"
)

func TestMilli(t *testing.T) {
	cases := map[string]struct {
		name  corev1.ResourceName
		milli int64
		want  string
	}{
		"memory in GiB":           {name: corev1.ResourceMemory, milli: 16 << 30 * 1000, want: "16Gi"},
		"memory in MiB":           {name: corev1.ResourceMemory, milli: 512 << 20 * 1000, want: "512Mi"},
		"memory in decimal units": {name: corev1.ResourceMemory, milli: 1e9 * 1000, want: "1G"},
		"ephemeral storage":       {name: corev1.ResourceEphemeralStorage, milli: 10 << 30 * 1000, want: "10Gi"},
		"huge pages":              {name: "hugepages-2Mi", milli: 1 << 30 * 1000, want: "1Gi"},
		"batch memory":            {name: "kubernetes.io/batch-memory", milli: 3 << 30 * 1000, want: "3Gi"},
		"GPU memory counts MiB":   {name: "volcano.sh/gpu-memory", milli: 16384 * 1000, want: "16384"},
		"GPUs":                    {name: "nvidia.com/gpu", milli: 8000, want: "8"},
		"1024 pods stay decimal":  {name: corev1.ResourcePods, milli: 1024 * 1000, want: "1024"},
		"fractions":               {name: "nvidia.com/gpu", milli: 500, want: "500m"},
		"zero":                    {name: corev1.ResourceMemory, want: "0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, quantity.Milli(tc.name, tc.milli).String()); diff != "" {
				t.Errorf("Milli(%s, %d) (-want,+got):\n%s", tc.name, tc.milli, diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "4", want: "4"},
		{in: "16Gi", want: "16Gi"},
		{in: "2E", want: "2E"}, // exa, not an exponent
		{in: "1e3", want: "1e3"},
		{in: "5E-2", want: "50e-3"},
		{in: "1e100", want: "10e99"},
		{in: "1e0100", want: "10e99"},
		{in: "1e101", err: `quantity "1e101": the exponent is beyond 100`},
		{in: "1e-101", err: `quantity "1e-101": the exponent is beyond 100`},
		// ParseQuantity would compute without end on this one.
		{in: "6E1000000000000", err: `quantity "6E1000000000000": the exponent is beyond 100`},
		{in: "x", err: "quantities must match the regular expression"},
	} {
		q, err := quantity.Parse(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error containing %q", tc.in, q.String(), err, tc.err)
			}
		case err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case q.String() != tc.want:
			t.Errorf("Parse(%q) = %s, want %s", tc.in, q.String(), tc.want)
		}
	}
}

func TestSortedNames(t *testing.T) {
	got := quantity.SortedNames(corev1.ResourceList{"nvidia.com/gpu": {}, corev1.ResourceMemory: {}}, corev1.ResourceList{"a/b": {}, corev1.ResourceCPU: {}, corev1.ResourceMemory: {}})
	want := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "a/b", "nvidia.com/gpu"}
	if !slices.Equal(got, want) {
		t.Errorf("SortedNames: %v, want %v", got, want)
	}
}
