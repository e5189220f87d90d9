package quantity_test

import (
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
