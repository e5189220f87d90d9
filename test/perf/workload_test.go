package perf

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every workload file must load, and the workloads must be there.
func TestWorkloadFiles(t *testing.T) {
	names, err := WorkloadNames(WorkloadDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"single-pods", "gangs", "pod-among-queued-gangs"} {
		if !slices.Contains(names, want) {
			t.Errorf("workload %s missing from %s (have %v)", want, WorkloadDir, names)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			w, err := LoadWorkload(WorkloadDir, name)
			if err != nil {
				t.Fatal(err)
			}
			if w.Pods(SizeSmall) > w.Pods(SizeLarge) || w.Sizes[SizeSmall].Nodes > w.Sizes[SizeLarge].Nodes {
				t.Errorf("small size (%d nodes, %d pods) is bigger than large (%d nodes, %d pods)",
					w.Sizes[SizeSmall].Nodes, w.Pods(SizeSmall), w.Sizes[SizeLarge].Nodes, w.Pods(SizeLarge))
			}
		})
	}
}

const validWorkload = `name: w
mode: backlog
nodes: {cpu: "4", memory: 8Gi, pods: 110}
jobs:
- {name: gang, kind: gang, podsPerJob: 3, requests: {cpu: "1"}}
sizes:
  small: {nodes: 2, jobs: {gang: 1}}
  large: {nodes: 4, jobs: {gang: 2}}
`

func TestParseWorkload(t *testing.T) {
	tests := map[string]struct {
		yaml string
		// wantErrs are substrings the error must contain; none means valid.
		wantErrs []string
	}{
		"valid": {yaml: validWorkload},
		"unknown field": {
			yaml:     validWorkload + "nodez: 3\n",
			wantErrs: []string{`unknown field "nodez"`},
		},
		"bad mode and missing large size": {
			yaml: strings.NewReplacer("mode: backlog", "mode: burst", "  large: {nodes: 4, jobs: {gang: 2}}\n", "").Replace(validWorkload),
			wantErrs: []string{
				`mode: Unsupported value: "burst"`,
				`sizes[large]: Required value`,
			},
		},
		"pod kind with several pods": {
			yaml:     strings.Replace(validWorkload, "kind: gang", "kind: pod", 1),
			wantErrs: []string{"jobs[0].podsPerJob: Invalid value: 3: must be 1 for kind pod"},
		},
		"size names an unknown group and misses one": {
			yaml:     strings.Replace(validWorkload, "{gang: 1}", "{gangs: 1}", 1),
			wantErrs: []string{"sizes[small].jobs[gang]: Invalid value: 0", "sizes[small].jobs[gangs]: Not found"},
		},
		"stream without a rate": {
			yaml:     strings.Replace(validWorkload, "mode: backlog", "mode: stream", 1),
			wantErrs: []string{"sizes[small].jobsPerSecond: Required value", "sizes[large].jobsPerSecond: Required value"},
		},
		"backlog with a rate": {
			yaml:     strings.Replace(validWorkload, "{nodes: 2,", "{nodes: 2, jobsPerSecond: 3,", 1),
			wantErrs: []string{"sizes[small].jobsPerSecond: Forbidden"},
		},
		"pods without requests": {
			yaml:     strings.Replace(validWorkload, `requests: {cpu: "1"}`, "requests: {}", 1),
			wantErrs: []string{"jobs[0].requests: Required value"},
		},
		"devices asked of nodes without any": {
			yaml:     strings.Replace(validWorkload, `requests: {cpu: "1"}`, `requests: {cpu: "1"}, devices: 1`, 1),
			wantErrs: []string{"jobs[0].devices: Invalid value: 1: the nodes offer no devices"},
		},
		"bad devices": {
			yaml:     validWorkload + "devices: {kind: tpu, perNode: 0}\n",
			wantErrs: []string{`devices.kind: Unsupported value: "tpu"`, "devices.perNode: Invalid value: 0"},
		},
		"a backlog group in a backlog workload, a gang in the fast lane": {
			yaml:     strings.Replace(validWorkload, `requests: {cpu: "1"}`, `requests: {cpu: "1"}, backlog: true, fastLane: true`, 1),
			wantErrs: []string{"jobs[0].backlog: Invalid value: true: only a stream workload", "jobs[0].fastLane: Invalid value: true: the fast lane places single pods"},
		},
		"bad probe": {
			yaml:     validWorkload + "probe: {count: 0, interval: 1s, requests: {cpu: 100m}}\n",
			wantErrs: []string{"probe.count: Invalid value: 0"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseWorkload([]byte(tc.yaml))
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.wantErrs)
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestExpandJobs(t *testing.T) {
	w := &Workload{
		Mode:  ModeStream,
		Jobs:  []JobGroup{{Name: "a", Kind: JobKindPod, PodsPerJob: 1}, {Name: "g", Kind: JobKindGang, PodsPerJob: 2}},
		Sizes: map[string]Size{SizeSmall: {Jobs: map[string]int{"a": 4, "g": 2}}},
	}
	tests := map[string]struct {
		mode     Mode
		wantJobs []string
	}{
		"backlog keeps group order":   {mode: ModeBacklog, wantJobs: []string{"a-00000", "a-00001", "a-00002", "a-00003", "g-00000", "g-00001"}},
		"stream interleaves by share": {mode: ModeStream, wantJobs: []string{"a-00000", "g-00000", "a-00001", "a-00002", "g-00001", "a-00003"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w.Mode = tc.mode
			var got []string
			for _, j := range expandJobs(w, SizeSmall) {
				got = append(got, j.name)
			}
			if diff := cmp.Diff(tc.wantJobs, got); diff != "" {
				t.Errorf("jobs (-want,+got):\n%s", diff)
			}
		})
	}
	// A backlog group of a stream workload is created first; the rest
	// stream in.
	w.Mode = ModeStream
	w.Jobs[1].Backlog = true
	backlog, stream := splitArrivals(w, expandJobs(w, SizeSmall))
	names := func(jobs []*job) (out []string) {
		for _, j := range jobs {
			out = append(out, j.name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"g-00000", "g-00001"}, names(backlog)); diff != "" {
		t.Errorf("backlog (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a-00000", "a-00001", "a-00002", "a-00003"}, names(stream)); diff != "" {
		t.Errorf("stream (-want,+got):\n%s", diff)
	}
	w.Jobs[1].Backlog = false
	w.Mode = ModeBacklog
	jobs := expandJobs(w, SizeSmall)
	if diff := cmp.Diff([]string{"g-00001-000", "g-00001-001"}, jobs[len(jobs)-1].pods); diff != "" {
		t.Errorf("pods of the last gang (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a-00000"}, jobs[0].pods); diff != "" {
		t.Errorf("pod of a single-pod job (-want,+got):\n%s", diff)
	}
}

func TestPercentiles(t *testing.T) {
	tests := map[string]struct {
		samples []float64
		want    Percentiles
	}{
		"none":     {want: Percentiles{}},
		"one":      {samples: []float64{2}, want: Percentiles{Count: 1, P50: 2, P99: 2, Max: 2}},
		"unsorted": {samples: []float64{4, 1, 3, 2}, want: Percentiles{Count: 4, P50: 2, P99: 4, Max: 4}},
		"hundred": {
			samples: func() []float64 {
				s := make([]float64, 100)
				for i := range s {
					s[i] = float64(100 - i)
				}
				return s
			}(),
			want: Percentiles{Count: 100, P50: 50, P99: 99, Max: 100},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, percentiles(tc.samples)); diff != "" {
				t.Errorf("percentiles (-want,+got):\n%s", diff)
			}
		})
	}
}
