package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTaskTopology(t *testing.T) {
	for name, tc := range map[string]struct {
		annotations map[string]string
		want        *TaskTopology
		err         string
	}{
		"none": {annotations: map[string]string{"other": "x"}},
		"all three, with blanks and a trailing separator": {
			annotations: map[string]string{
				TaskTopologyAffinityKey:     "ps, worker; ps,evaluator;",
				TaskTopologyAntiAffinityKey: "ps;worker,chief;chief,evaluator",
				TaskTopologyTaskOrderKey:    "ps,worker,chief,evaluator",
			},
			want: &TaskTopology{
				Affinity:     [][]string{{"ps", "worker"}, {"evaluator", "ps"}},
				AntiAffinity: [][]string{{"ps"}, {"chief", "worker"}, {"chief", "evaluator"}},
				Order:        []string{"ps", "worker", "chief", "evaluator"},
			},
		},
		"empty values": {
			annotations: map[string]string{TaskTopologyAffinityKey: ""},
			want:        &TaskTopology{},
		},
		"empty name in a group": {
			annotations: map[string]string{TaskTopologyAntiAffinityKey: "ps,,worker"},
			err:         "annotation volcano.sh/task-topology-anti-affinity: \"ps,,worker\" has an empty task name",
		},
		"task listed twice in the order": {
			annotations: map[string]string{TaskTopologyTaskOrderKey: "ps,worker,ps"},
			err:         "annotation volcano.sh/task-topology-task-order: task \"ps\" is listed twice",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTaskTopology(tc.annotations)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
