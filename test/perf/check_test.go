package perf

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCheck(t *testing.T) {
	w := &Workload{
		Nodes: NodeShape{CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"), Pods: 3},
		Jobs: []JobGroup{{
			Name: "gang", Kind: JobKindGang, PodsPerJob: 2,
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		}},
		Sizes: map[string]Size{SizeSmall: {Nodes: 2, Jobs: map[string]int{"gang": 2}}},
	}
	jobs := expandJobs(w, SizeSmall) // gang-00000-00{0,1}, gang-00001-00{0,1}
	allBound := map[string]string{"gang-00000-000": "n0", "gang-00000-001": "n0", "gang-00001-000": "n1", "gang-00001-001": "n1"}
	tests := map[string]struct {
		saturating bool
		gangs      bool
		bound      map[string]string
		// bindings overrides the successful bindings per pod; nil means one
		// per bound pod.
		bindings map[string]int
		rebound  int
		// wantProblems are prefixes of the problems reported, in order.
		wantProblems []string
	}{
		"every pod bound once": {bound: allBound, gangs: true},
		"a pod left pending": {
			bound:        without(allBound, "gang-00001-001"),
			wantProblems: []string{"1 pods left pending (first: gang-00001-001)"},
		},
		"pending is expected when saturating, a partial gang is not for a gang scheduler": {
			saturating:   true,
			gangs:        true,
			bound:        without(allBound, "gang-00001-001"),
			wantProblems: []string{"gang gang-00001 has 1 of its 2 pods bound"},
		},
		"kube-scheduler may bind part of a gang": {
			saturating: true,
			bound:      without(allBound, "gang-00001-001"),
		},
		"bound twice": {
			bound:        allBound,
			bindings:     map[string]int{"gang-00000-000": 2, "gang-00000-001": 1, "gang-00001-000": 1, "gang-00001-001": 1},
			wantProblems: []string{"pod gang-00000-000 bound, with 2 successful bindings"},
		},
		"bound without a binding by the scheduler": {
			bound:        allBound,
			bindings:     map[string]int{"gang-00000-001": 1, "gang-00001-000": 1, "gang-00001-001": 1},
			wantProblems: []string{"pod gang-00000-000 bound, with 0 successful bindings"},
		},
		"node changed": {
			bound:        allBound,
			rebound:      1,
			wantProblems: []string{"1 pods changed node"},
		},
		"node over capacity": {
			bound:        map[string]string{"gang-00000-000": "n0", "gang-00000-001": "n0", "gang-00001-000": "n0", "gang-00001-001": "n1"},
			wantProblems: []string{"node n0: cpu requested 6, allocatable 4"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w.Saturating = tc.saturating
			rec := &bindRecorder{seen: map[string]bool{}, boundAt: map[string]time.Time{}, node: tc.bound, rebound: tc.rebound}
			writes := WriteCounts{bindings: map[string]int{}}
			for pod := range tc.bound {
				rec.boundAt[pod] = time.Now()
				writes.bindings["ns/"+pod] = 1
			}
			if tc.bindings != nil {
				writes.bindings = map[string]int{}
				for pod, n := range tc.bindings {
					writes.bindings["ns/"+pod] = n
				}
			}
			got := check(w, jobs, nil, rec, writes, "ns", tc.gangs, true)
			var gotPrefixes []string
			for i, p := range got {
				if i < len(tc.wantProblems) && strings.HasPrefix(p, tc.wantProblems[i]) {
					p = tc.wantProblems[i]
				}
				gotPrefixes = append(gotPrefixes, p)
			}
			if diff := cmp.Diff(tc.wantProblems, gotPrefixes); diff != "" {
				t.Errorf("problems (-want,+got):\n%s", diff)
			}
		})
	}
}

func without(m map[string]string, key string) map[string]string {
	out := maps.Clone(m)
	delete(out, key)
	return out
}
