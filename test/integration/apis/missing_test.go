//go:build integration

package apis

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMissing(t *testing.T) {
	cases := map[string]struct {
		want, got map[string]any
		paths     []string
	}{
		"same object with server additions": {
			want: map[string]any{"spec": map[string]any{"replicas": int64(2)}},
			got:  map[string]any{"spec": map[string]any{"replicas": float64(2), "queue": "default"}, "status": map[string]any{}},
		},
		"pruned field": {
			want:  map[string]any{"spec": map[string]any{"replica": int64(2)}},
			got:   map[string]any{"spec": map[string]any{}},
			paths: []string{".spec.replica: lost (pruned or dropped by the server)"},
		},
		"changed value in a list": {
			want:  map[string]any{"items": []any{"a", "b"}},
			got:   map[string]any{"items": []any{"a", "c"}},
			paths: []string{".items[1]: want b, got c"},
		},
		"shortened list": {
			want:  map[string]any{"items": []any{"a", "b"}},
			got:   map[string]any{"items": []any{"a"}},
			paths: []string{".items: want a list of 2, got [a]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.paths, missing(tc.want, tc.got, "")); diff != "" {
				t.Errorf("missing (-want,+got):\n%s", diff)
			}
		})
	}
}
