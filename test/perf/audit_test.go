package perf

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCountWrites(t *testing.T) {
	const before = `{"verb":"create","userAgent":"caldera-scheduler","objectRef":{"resource":"pods","namespace":"ns","name":"early","subresource":"binding"},"responseStatus":{"code":201}}
`
	const log = `{"verb":"create","userAgent":"caldera-scheduler","objectRef":{"resource":"pods","namespace":"ns","name":"a","subresource":"binding"},"responseStatus":{"code":201},"stageTimestamp":"2026-01-02T03:04:05.678901Z"}
{"verb":"create","userAgent":"caldera-scheduler","objectRef":{"resource":"pods","namespace":"ns","name":"a","subresource":"binding"},"responseStatus":{"code":409},"stageTimestamp":"2026-01-02T03:04:06.000000Z"}
{"verb":"create","userAgent":"kube-scheduler/v1.37.2 (linux/amd64) kubernetes/abc/scheduler","objectRef":{"resource":"events","namespace":"ns","apiGroup":"events.k8s.io"},"responseStatus":{"code":201}}
{"verb":"patch","userAgent":"caldera-scheduler","objectRef":{"resource":"podgroups","namespace":"ns","name":"g","subresource":"status"},"responseStatus":{"code":200}}
{"verb":"create","userAgent":"caldera-scheduler","objectRef":{"resource":"events","namespace":"ns"},"responseStatus":{"code":201}}
{"verb":"patch","userAgent":"kwok/v0.8.0 (linux/amd64)","objectRef":{"resource":"pods","namespace":"ns","name":"a","subresource":"status"},"responseStatus":{"code":200}}
{"verb":"create","userAgent":"caldera-scheduler","objectRef":{"resource":"pods","namespace":"ns","name":"b","subresou`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(before+log), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		userAgent string
		want      WriteCounts
	}{
		"caldera-scheduler, from the offset, without the line being written": {
			userAgent: "caldera-scheduler",
			want: WriteCounts{
				Total:        4,
				ByKind:       map[string]int{"create pods/binding": 2, "patch podgroups/status": 1, "create events": 1},
				Failed:       1,
				FailedByKind: map[string]int{"create pods/binding 409": 1},
				bindings:     map[string]int{"ns/a": 1},
				boundAt:      map[string]time.Time{"ns/a": time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)},
			},
		},
		"kube-scheduler by prefix": {
			userAgent: "kube-scheduler",
			want: WriteCounts{
				Total:        1,
				ByKind:       map[string]int{"create events": 1},
				FailedByKind: map[string]int{},
				bindings:     map[string]int{},
				boundAt:      map[string]time.Time{},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := countWrites(path, int64(len(before)), tc.userAgent)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(WriteCounts{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("counts (-want,+got):\n%s", diff)
			}
		})
	}
}
