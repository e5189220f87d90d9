package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestResourcesString: amounts of bytes read as quantities in binary SI;
// volcano.sh/gpu-memory, which counts MiB, is not taken for bytes.
func TestResourcesString(t *testing.T) {
	cases := map[string]struct {
		in   corev1.ResourceList
		want string
	}{
		"cpu, memory and GPUs": {
			in:   corev1.ResourceList{"cpu": resource.MustParse("8"), "memory": resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("2")},
			want: "cpu 8, memory 16Gi, nvidia.com/gpu 2",
		},
		"ephemeral storage": {
			in:   corev1.ResourceList{"ephemeral-storage": resource.MustParse("100Gi")},
			want: "ephemeral-storage 100Gi",
		},
		"GPU memory": {
			in:   corev1.ResourceList{"volcano.sh/gpu-memory": resource.MustParse("16384")},
			want: "volcano.sh/gpu-memory 16384",
		},
		"nothing": {in: corev1.ResourceList{}, want: "nothing"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(tc.in).String()); diff != "" {
				t.Errorf("String (-want,+got):\n%s", diff)
			}
		})
	}
}
