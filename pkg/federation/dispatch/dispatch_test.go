package dispatch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func cpu(milli int64) Resources { return Resources{corev1.ResourceCPU: milli} }

func cluster(name string, cpuCores int64) Cluster {
	return Cluster{Name: name, Ready: true, Allocatable: cpu(cpuCores * 1000), Allocated: Resources{}, Allocating: Resources{}}
}

// jobs makes n one-component jobs of the queue, each of replicas pods of
// cores CPUs, created a second apart after offset.
func jobs(queue string, n int, replicas int32, cores int64, offset time.Duration) []*Binding {
	var out []*Binding
	for i := range n {
		out = append(out, &Binding{
			ID: fmt.Sprintf("%s/job-%03d", queue, i), Queue: queue, Created: t0.Add(offset + time.Duration(i)*time.Second),
			Components: []Component{{Name: "worker", Replicas: replicas, Request: cpu(cores * 1000)}},
		})
	}
	return out
}

func released(d Decision) map[string]int {
	out := map[string]int{}
	for _, r := range d.Releases {
		out[strings.SplitN(r.ID, "/", 2)[0]]++
	}
	return out
}

func TestWeightedFairShare(t *testing.T) {
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 20), cluster("b", 10)},
		Queues:   []Queue{{Name: "research", Weight: 2}, {Name: "batch", Weight: 1}},
		Bindings: append(jobs("research", 100, 1, 1, 0), jobs("batch", 100, 1, 1, 0)...),
		Now:      t0,
	}
	d := Decide(s, Options{})
	if diff := cmp.Diff(map[string]int{"research": 20, "batch": 10}, released(d)); diff != "" {
		t.Errorf("released per queue (-want,+got):\n%s", diff)
	}
	if h := d.Holds["batch/job-050"]; h.Rule != RuleNoClusterFits {
		t.Errorf("hold %+v, want NoClusterFits", h)
	}
}

func TestCapability(t *testing.T) {
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 100)},
		Queues:   []Queue{{Name: "q", Weight: 1, Capability: cpu(5000)}},
		Bindings: jobs("q", 8, 1, 1, 0),
		Now:      t0,
	}
	// Two released already count against the capability.
	s.Bindings[0].Released, s.Bindings[0].Cluster = true, "a"
	s.Bindings[1].Released = true
	d := Decide(s, Options{})
	if n := len(d.Releases); n != 3 {
		t.Errorf("released %d, want 3 (5 CPUs, 2 held by released jobs)", n)
	}
	want := `queue "q" would hold cpu 6, over its capability by cpu 1`
	if h := d.Holds["q/job-005"]; h.Rule != RuleCapability || h.Message != want {
		t.Errorf("hold %+v, want %q", h, want)
	}
}

func TestPriority(t *testing.T) {
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 4)},
		Queues:   []Queue{{Name: "low", Weight: 10}, {Name: "high", Weight: 1, Priority: 100}},
		Bindings: append(jobs("low", 4, 1, 1, 0), jobs("high", 3, 1, 1, time.Hour)...),
		Now:      t0,
	}
	urgent := jobs("low", 1, 1, 1, 2*time.Hour)[0]
	urgent.ID, urgent.Priority = "low/urgent", 10
	s.Bindings = append(s.Bindings, urgent)
	d := Decide(s, Options{})
	var got []string
	for _, r := range d.Releases {
		got = append(got, r.ID)
	}
	// The high-priority queue first, whatever its share; in the other
	// queue the high-priority job before older ones.
	if diff := cmp.Diff([]string{"high/job-000", "high/job-001", "high/job-002", "low/urgent"}, got); diff != "" {
		t.Errorf("releases (-want,+got):\n%s", diff)
	}
}

func TestLargeJobNeitherBlocksNorStarves(t *testing.T) {
	big := &Binding{ID: "q/big", Queue: "q", Created: t0.Add(-time.Hour),
		Components: []Component{{Name: "ps", Replicas: 1, Request: cpu(2000)}, {Name: "worker", Replicas: 3, Request: cpu(2000)}}}
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 10), cluster("b", 10)},
		Queues:   []Queue{{Name: "q", Weight: 1}},
		Now:      t0,
	}
	// 4 CPUs in use on each cluster: the 8-CPU job fits neither.
	s.Clusters[0].Allocated, s.Clusters[1].Allocated = cpu(4000), cpu(4000)
	s.Bindings = append([]*Binding{big}, jobs("q", 5, 1, 1, 0)...)
	d := Decide(s, Options{StarvationWait: 10 * time.Minute})
	if len(d.Releases) != 5 {
		t.Errorf("released %v, want the 5 small jobs past the big one", d.Releases)
	}
	if h := d.Holds["q/big"]; h.Rule != RuleNoClusterFits || h.Reserving ||
		h.Message != "no Ready cluster has cpu 8 free for the job; a comes closest, short of cpu 2" {
		t.Errorf("big job's hold %+v", h)
	}

	// Held for longer than the wait: it reserves a, and small jobs go to b
	// only.
	big.HeldSince = t0.Add(-11 * time.Minute)
	d = Decide(s, Options{StarvationWait: 10 * time.Minute})
	if h := d.Holds["q/big"]; !h.Reserving || h.Cluster != "a" {
		t.Errorf("starved big job's hold %+v, want it reserving a", h)
	}
	for _, r := range d.Releases {
		if r.Cluster == "a" {
			t.Errorf("%s released to the reserved cluster a", r.ID)
		}
	}
	if len(d.Releases) != 5 {
		t.Errorf("released %d small jobs, want 5 on b (6 CPUs free)", len(d.Releases))
	}
	// Once a has room, the big job goes first.
	s.Clusters[0].Allocated = cpu(1000)
	d = Decide(s, Options{StarvationWait: 10 * time.Minute})
	if len(d.Releases) == 0 || d.Releases[0] != (Release{ID: "q/big", Cluster: "a"}) {
		t.Errorf("releases %v, want the big job on a first", d.Releases)
	}
}

func TestInFlightAndReadiness(t *testing.T) {
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 4), cluster("b", 4), cluster("down", 100)},
		Queues:   []Queue{{Name: "q", Weight: 1}},
		Bindings: jobs("q", 6, 1, 2, 0),
		Planned:  map[string]string{"q/job-001": "b"},
		Now:      t0,
	}
	s.Clusters[2].Ready = false
	// job-000 is placed on a by Karmada and not reported yet; job-001 is
	// released and not yet placed, counted on b as planned; job-002 runs
	// on b and is in b's allocated already.
	s.Bindings[0].Released, s.Bindings[0].Cluster = true, "a"
	s.Bindings[1].Released = true
	s.Bindings[2].Released, s.Bindings[2].Cluster, s.Bindings[2].Reported = true, "b", true
	s.Clusters[1].Allocated = cpu(2000)
	d := Decide(s, Options{})
	// a: 4-2 = 2 free; b: 4-2-2 = 0 free; down is not Ready.
	if diff := cmp.Diff([]Release{{ID: "q/job-003", Cluster: "a"}}, d.Releases); diff != "" {
		t.Errorf("releases (-want,+got):\n%s", diff)
	}

	none := &Snapshot{Clusters: []Cluster{{Name: "x"}}, Queues: s.Queues, Bindings: jobs("q", 1, 1, 1, 0), Now: t0}
	if h := Decide(none, Options{}).Holds["q/job-000"]; h.Rule != RuleNoReadyCluster {
		t.Errorf("hold %+v, want NoReadyCluster", h)
	}
}

// TestRefused: a released job its cluster refused to apply holds nothing,
// neither in its queue nor in the cluster; before that it counts in both.
func TestRefused(t *testing.T) {
	tests := map[string]struct {
		refused bool
		want    []Release
	}{
		"counted while not refused": {want: nil},
		"refused holds nothing":     {refused: true, want: []Release{{ID: "q/job-001", Cluster: "a"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// One 4-CPU cluster, a queue capped at 4 CPUs; job-000 (4 CPUs)
			// was released to a, which does not report it.
			s := &Snapshot{
				Clusters: []Cluster{cluster("a", 4)},
				Queues:   []Queue{{Name: "q", Weight: 1, Capability: cpu(4000)}},
				Bindings: jobs("q", 2, 1, 4, 0),
				Now:      t0,
			}
			s.Bindings[0].Released, s.Bindings[0].Cluster, s.Bindings[0].Refused = true, "a", tc.refused
			d := Decide(s, Options{})
			if diff := cmp.Diff(tc.want, d.Releases); diff != "" {
				t.Errorf("releases (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGuarantee(t *testing.T) {
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 10)},
		Queues:   []Queue{{Name: "prod", Weight: 1, Guarantee: cpu(6000)}, {Name: "dev", Weight: 1}},
		Bindings: jobs("dev", 6, 1, 1, 0),
		Now:      t0,
	}
	d := Decide(s, Options{})
	if n := len(d.Releases); n != 4 {
		t.Errorf("released %d dev jobs, want 4: 6 of 10 CPUs are guaranteed to prod", n)
	}
	if h := d.Holds["dev/job-004"]; h.Rule != RuleGuarantee {
		t.Errorf("hold %+v, want QueueGuarantee", h)
	}
}

func TestClusterAffinityAndClosedQueue(t *testing.T) {
	s := &Snapshot{
		Clusters: []Cluster{cluster("a", 10), cluster("b", 10)},
		Queues:   []Queue{{Name: "q", Weight: 1}, {Name: "shut", Weight: 1, Closed: true}},
		Bindings: append(jobs("q", 2, 1, 1, 0), jobs("shut", 1, 1, 1, 0)...),
		Now:      t0,
	}
	s.Bindings[0].Clusters = []string{"b"}
	// Its placement allows none of the clusters.
	s.Bindings[1].Clusters = []string{}
	d := Decide(s, Options{})
	if diff := cmp.Diff([]Release{{ID: "q/job-000", Cluster: "b"}}, d.Releases); diff != "" {
		t.Errorf("releases (-want,+got):\n%s", diff)
	}
	if h := d.Holds["q/job-001"]; h.Rule != RuleNoClusterFits || h.Message != "no Ready cluster is one the job's placement allows" {
		t.Errorf("hold of the job allowed nowhere: %+v", h)
	}
	if h := d.Holds["shut/job-000"]; h.Rule != RuleQueueClosed {
		t.Errorf("hold %+v", h)
	}
}

// TestProperties: on random snapshots, no queue goes over its capability,
// no cluster is given more than it has free, and the decision does not
// depend on the order of the input.
func TestProperties(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		s := &Snapshot{Now: t0, Planned: map[string]string{}}
		for i := range 1 + r.IntN(4) {
			c := cluster(fmt.Sprintf("c%d", i), int64(4+r.IntN(60)))
			c.Allocated = cpu(int64(r.IntN(4000)))
			c.Ready = r.IntN(5) > 0
			s.Clusters = append(s.Clusters, c)
		}
		for i := range 1 + r.IntN(4) {
			q := Queue{Name: fmt.Sprintf("q%d", i), Weight: int32(1 + r.IntN(3)), Priority: int32(r.IntN(2))}
			if r.IntN(2) == 0 {
				q.Capability = cpu(int64(1000 * (2 + r.IntN(30))))
			}
			s.Queues = append(s.Queues, q)
			for _, b := range jobs(q.Name, r.IntN(20), int32(1+r.IntN(4)), int64(1+r.IntN(4)), time.Duration(r.IntN(100))*time.Second) {
				b.Priority = int32(r.IntN(3))
				// Some jobs are children of one of three gangs.
				if r.IntN(3) == 0 {
					b.Gang = fmt.Sprintf("g%d", r.IntN(3))
				}
				s.Bindings = append(s.Bindings, b)
			}
		}
		gangMin := map[string]int{"g0": 0, "g1": 1, "g2": 2}
		for _, b := range s.Bindings {
			b.GangMin = gangMin[b.Gang]
		}
		d := Decide(s, Options{StarvationWait: time.Minute})

		byID := map[string]*Binding{}
		for _, b := range s.Bindings {
			byID[b.ID] = b
		}
		used, given := map[string]Resources{}, map[string]Resources{}
		for _, rel := range d.Releases {
			b := byID[rel.ID]
			if used[b.Queue] == nil {
				used[b.Queue] = Resources{}
			}
			used[b.Queue].Add(b.Request())
			if given[rel.Cluster] == nil {
				given[rel.Cluster] = Resources{}
			}
			given[rel.Cluster].Add(b.Request())
		}
		// A gang goes whole, or with at least its minimum.
		gangSize, gangReleased := map[string]int{}, map[string]int{}
		for _, b := range s.Bindings {
			gangSize[b.Gang]++
		}
		for _, rel := range d.Releases {
			gangReleased[byID[rel.ID].Gang]++
		}
		for g, n := range gangReleased {
			if want := gangMin[g]; g != "" && n < gangSize[g] && (want == 0 || n < want) {
				t.Fatalf("seed %d: gang %s released %d of %d (min %d)", seed, g, n, gangSize[g], want)
			}
		}
		for _, q := range s.Queues {
			if len(q.Capability) > 0 && !used[q.Name].Fits(q.Capability) {
				t.Fatalf("seed %d: queue %s released %s over capability %s", seed, q.Name, used[q.Name], q.Capability)
			}
		}
		for _, c := range s.Clusters {
			g := given[c.Name]
			if g == nil {
				continue
			}
			if !c.Ready {
				t.Fatalf("seed %d: released to NotReady cluster %s", seed, c.Name)
			}
			if free := c.Allocatable.Clone().Sub(c.Allocated); !g.Fits(free) {
				t.Fatalf("seed %d: cluster %s given %s with %s free", seed, c.Name, g, free)
			}
		}
		shuffled := *s
		shuffled.Bindings = append([]*Binding(nil), s.Bindings...)
		r.Shuffle(len(shuffled.Bindings), func(i, j int) {
			shuffled.Bindings[i], shuffled.Bindings[j] = shuffled.Bindings[j], shuffled.Bindings[i]
		})
		shuffled.Queues = append([]Queue(nil), s.Queues...)
		r.Shuffle(len(shuffled.Queues), func(i, j int) { shuffled.Queues[i], shuffled.Queues[j] = shuffled.Queues[j], shuffled.Queues[i] })
		if diff := cmp.Diff(d, Decide(&shuffled, Options{StarvationWait: time.Minute})); diff != "" {
			t.Fatalf("seed %d: decision depends on input order (-first,+shuffled):\n%s", seed, diff)
		}
		// Without messages, the same decision and rules.
		want := Decision{Releases: d.Releases, Holds: map[string]Hold{}}
		for id, h := range d.Holds {
			h.Message = ""
			want.Holds[id] = h
		}
		if diff := cmp.Diff(want, Decide(s, Options{StarvationWait: time.Minute, OmitMessages: true})); diff != "" {
			t.Fatalf("seed %d: decision without messages differs (-with, messages cleared,+without):\n%s", seed, diff)
		}
	}
}

// simulate runs decisions every minute for steps minutes on one cluster:
// released jobs run for their duration and free their room; held jobs
// carry the time they were first held, as the dispatcher records it. It
// returns, per job, when it was released.
func simulate(s *Snapshot, opts Options, steps int, runFor func(*Binding) time.Duration) map[string]time.Time {
	releasedAt := map[string]time.Time{}
	byID := map[string]*Binding{}
	for _, b := range s.Bindings {
		byID[b.ID] = b
	}
	base := s.Clusters[0].Allocated.Clone()
	for step := range steps {
		s.Now = t0.Add(time.Duration(step) * time.Minute)
		// Finished jobs free their room; running ones are reported.
		s.Clusters[0].Allocated = base.Clone()
		for _, b := range s.Bindings {
			if !b.Released || b.Finished {
				continue
			}
			if s.Now.Sub(releasedAt[b.ID]) >= runFor(b) {
				b.Finished = true
				continue
			}
			b.Reported = true
			s.Clusters[0].Allocated.Add(b.Request())
		}
		d := Decide(s, opts)
		for _, r := range d.Releases {
			b := byID[r.ID]
			b.Released, b.Cluster = true, r.Cluster
			releasedAt[b.ID] = s.Now
		}
		for id := range d.Holds {
			if b := byID[id]; b.HeldSince.IsZero() {
				b.HeldSince = s.Now
			}
		}
	}
	return releasedAt
}

// TestNoStarvation: a stream of small jobs that alone would keep a
// 10-CPU cluster busy forever, and an 8-CPU job held among them, on random
// streams: with a starvation wait, the big job is released within the
// wait plus the longest small job's run; without one, the small jobs keep
// it out.
func TestNoStarvation(t *testing.T) {
	const seeds = 15
	starvedWithout := 0
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 2))
		mk := func() *Snapshot {
			s := &Snapshot{Clusters: []Cluster{cluster("a", 10)}, Queues: []Queue{{Name: "q", Weight: 1}}}
			big := &Binding{ID: "q/big", Queue: "q", Created: t0.Add(-time.Second), Components: []Component{{Name: "w", Replicas: 4, Request: cpu(2000)}}}
			s.Bindings = append(s.Bindings, big)
			for i := range 400 {
				b := jobs("q", 1, 1, int64(1+r.IntN(3)), time.Duration(i)*time.Second)[0]
				b.ID = fmt.Sprintf("q/small-%03d", i)
				b.Priority = 1 // ahead of the big job in the queue
				s.Bindings = append(s.Bindings, b)
			}
			return s
		}
		runs := map[string]time.Duration{}
		runFor := func(b *Binding) time.Duration {
			if d, ok := runs[b.ID]; ok {
				return d
			}
			d := time.Duration(1+r.IntN(5)) * time.Minute
			runs[b.ID] = d
			return d
		}
		wait := 10 * time.Minute
		got := simulate(mk(), Options{StarvationWait: wait}, 120, runFor)
		at, ok := got["q/big"]
		if !ok {
			t.Fatalf("seed %d: the big job was never released with a %s wait", seed, wait)
		}
		// Held from the first decision; reserving after the wait; the
		// cluster drains within the longest run (5 minutes), plus a step.
		if limit := t0.Add(wait + 6*time.Minute); at.After(limit) {
			t.Errorf("seed %d: the big job released at %s, after %s", seed, at.Sub(t0), limit.Sub(t0))
		}
		if _, ok := simulate(mk(), Options{}, 60, runFor)["q/big"]; !ok {
			starvedWithout++
		}
	}
	// The streams must be ones that starve the big job without a wait, or
	// the first half shows nothing.
	if starvedWithout < seeds/2 {
		t.Errorf("without a wait the big job starved in %d of %d streams, want most", starvedWithout, seeds)
	}
}

// TestFairShareRatios: on random weights, two queues with more work than
// the cluster holds get room in proportion to their weights, within one
// job.
func TestFairShareRatios(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 3))
		wa, wb := int32(1+r.IntN(4)), int32(1+r.IntN(4))
		capacity := int64(20 + r.IntN(80))
		s := &Snapshot{
			Clusters: []Cluster{cluster("a", capacity)},
			Queues:   []Queue{{Name: "qa", Weight: wa}, {Name: "qb", Weight: wb}},
			Bindings: append(jobs("qa", int(capacity), 1, 1, 0), jobs("qb", int(capacity), 1, 1, 0)...),
			Now:      t0,
		}
		got := released(Decide(s, Options{}))
		want := float64(capacity) * float64(wa) / float64(wa+wb)
		if diff := float64(got["qa"]) - want; diff > 1 || diff < -1 {
			t.Errorf("seed %d: weights %d:%d on %d CPUs released %v, want about %.1f for qa", seed, wa, wb, capacity, got, want)
		}
		if got["qa"]+got["qb"] != int(capacity) {
			t.Errorf("seed %d: released %v, want the cluster full (%d)", seed, got, capacity)
		}
	}
}

// TestGang: two children of a HyperJob, pinned to clusters a and b, go
// together or not at all; when b is full, neither goes and a smaller job
// takes the room the gang would have had in a; a gang missing a job
// waits; with gangMin 1, the child that fits goes.
func TestGang(t *testing.T) {
	children := func(min int) []*Binding {
		out := jobs("q", 2, 4, 1, 0)
		for i, b := range out {
			b.Gang, b.GangSize, b.GangMin = "ns/llm", 2, min
			b.Clusters = []string{[]string{"a", "b"}[i]}
		}
		return out
	}
	s := &Snapshot{Clusters: []Cluster{cluster("a", 8), cluster("b", 8)}, Queues: []Queue{{Name: "q", Weight: 1}}, Bindings: children(0), Now: t0}
	d := Decide(s, Options{})
	if diff := cmp.Diff([]Release{{ID: "q/job-000", Cluster: "a"}, {ID: "q/job-001", Cluster: "b"}}, d.Releases); diff != "" {
		t.Errorf("room for both (-want,+got):\n%s", diff)
	}

	s.Clusters[1].Allocated = cpu(6000)
	small := jobs("q", 1, 1, 8, time.Hour)[0]
	small.ID = "q/small"
	s.Bindings = append(children(0), small)
	d = Decide(s, Options{})
	if diff := cmp.Diff([]Release{{ID: "q/small", Cluster: "a"}}, d.Releases); diff != "" {
		t.Errorf("b full (-want,+got):\n%s", diff)
	}
	want := "1 of the 2 jobs of gang ns/llm fit now, 2 needed; q/job-001: no Ready cluster has cpu 4 free for the job; b comes closest, short of cpu 2"
	for _, id := range []string{"q/job-000", "q/job-001"} {
		if h := d.Holds[id]; h.Rule != RuleGang || h.Message != want {
			t.Errorf("hold of %s: %+v", id, h)
		}
	}

	s.Bindings = children(1)
	d = Decide(s, Options{})
	if diff := cmp.Diff([]Release{{ID: "q/job-000", Cluster: "a"}}, d.Releases); diff != "" {
		t.Errorf("gangMin 1 (-want,+got):\n%s", diff)
	}
	if h := d.Holds["q/job-001"]; h.Rule != RuleNoClusterFits {
		t.Errorf("with gangMin 1, the child that does not fit says why: %+v", h)
	}

	s.Clusters[1].Allocated = nil
	s.Bindings = children(0)[:1]
	d = Decide(s, Options{})
	if len(d.Releases) != 0 || d.Holds["q/job-000"].Message != "1 of the 2 jobs of gang ns/llm exist yet" {
		t.Errorf("incomplete gang: releases %v, hold %+v", d.Releases, d.Holds["q/job-000"])
	}
}

// TestDataPreferenceAndBlock: a job preferring cluster b goes there
// though a comes first by name, and goes to a when b is full; a job whose
// data is not located yet is held with that reason.
func TestDataPreferenceAndBlock(t *testing.T) {
	s := &Snapshot{Clusters: []Cluster{cluster("a", 8), cluster("b", 8)}, Queues: []Queue{{Name: "q", Weight: 1}}, Bindings: jobs("q", 3, 1, 4, 0), Now: t0}
	for _, b := range s.Bindings[:2] {
		b.Preferred = []string{"b"}
	}
	s.Bindings[2].Blocked = &Hold{Rule: RuleData, Message: "waiting for the location of amoro table \"t\""}
	d := Decide(s, Options{})
	if diff := cmp.Diff([]Release{{ID: "q/job-000", Cluster: "b"}, {ID: "q/job-001", Cluster: "b"}}, d.Releases); diff != "" {
		t.Errorf("releases (-want,+got):\n%s", diff)
	}
	if h := d.Holds["q/job-002"]; h.Rule != RuleData {
		t.Errorf("blocked job: %+v", h)
	}
	s.Clusters[1].Allocated = cpu(8000)
	s.Bindings = s.Bindings[:1]
	d = Decide(s, Options{})
	if diff := cmp.Diff([]Release{{ID: "q/job-000", Cluster: "a"}}, d.Releases); diff != "" {
		t.Errorf("b full (-want,+got):\n%s", diff)
	}
}
