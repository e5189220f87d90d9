package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caldera-sh/caldera/pkg/loadaware"
)

var now = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

var cfg = Config{
	High: Percentages{CPU: 80, Memory: 80}, Low: Percentages{CPU: 60, Memory: 60},
	MaxPerRun: 10, MaxPerNode: 5, StaleAfter: 5 * time.Minute,
}

// n is a node of 10 CPUs and 100 GB using cpu CPUs and 10 GB, measured a
// minute ago, with its pods.
func n(name string, cpu float64, pods ...Pod) Node {
	var req Amounts
	for _, p := range pods {
		req = req.Plus(p.Request)
	}
	return Node{Name: name, Allocatable: Amounts{10000, 100e9}, Requested: req,
		Usage: &loadaware.Usage{At: now.Add(-time.Minute), Window: 5 * time.Minute, CPU: int64(cpu * 1000), Memory: 10e9},
		Pods:  pods}
}

// p is a pod using cpu CPUs (and requesting as much), of priority prio.
func p(key string, prio int32, cpu float64) Pod {
	a := Amounts{int64(cpu * 1000), 1e9}
	return Pod{Key: key, UID: "uid-" + key, Priority: prio, Request: a, Usage: a}
}

func TestDecide(t *testing.T) {
	budgeted := func(q Pod, b ...string) Pod { q.Budgets = b; return q }
	unmovable := func(q Pod, why string) Pod { q.Unmovable = why; return q }
	leaving := func(q Pod) Pod { q.Leaving = true; return q }
	stale := func(x Node) Node {
		x.Usage = &loadaware.Usage{At: now.Add(-10 * time.Minute), CPU: 9500, Memory: 10e9}
		return x
	}
	closed := func(x Node) Node { x.Closed = true; return x }
	hotNode := func(pods ...Pod) Node { return n("hot", 9, pods...) }
	for _, tc := range []struct {
		name    string
		nodes   []Node
		allowed map[string]int32
		cfg     *Config
		// want are the evicted pods, each "pod>to".
		want []string
		// states are the nodes' states, in name order.
		states []State
		// hotMessage is the hot node's verdict, when checked.
		hotMessage string
	}{
		{
			name:       "the lowest priority first, then the largest, until the node is at the low watermark",
			nodes:      []Node{hotNode(p("a", 10, 2), p("b", 0, 1), p("c", 0, 2), p("d", 0, 0.5)), n("cool", 1)},
			want:       []string{"c>cool", "b>cool"},
			states:     []State{Room, Hot},
			hotMessage: "usage cpu 90% memory 10% above the high watermark cpu 80% memory 80%; 2 evicted, usage now estimated cpu 60% memory 8%",
		},
		{
			name:   "no node with room below the high watermark: nothing moves",
			nodes:  []Node{hotNode(p("a", 0, 2)), n("warm", 7)},
			states: []State{Hot, Room},
			hotMessage: "usage cpu 90% memory 10% above the high watermark cpu 80% memory 80%; 0 evicted, usage now estimated cpu 90% memory 10%; " +
				"not lower because: no other node has room below the high watermark (1)",
		},
		{
			name:   "room is used up as pods are sent to it",
			nodes:  []Node{hotNode(p("a", 0, 1.5), p("b", 0, 1.5)), n("warm", 6)},
			want:   []string{"a>warm"},
			states: []State{Hot, Room},
		},
		{
			name:       "unmovable pods are skipped, with their reasons",
			nodes:      []Node{hotNode(unmovable(p("gang-0", 0, 5), "gang member (minMember 4)"), p("web", 5, 3)), n("cool", 1)},
			want:       []string{"web>cool"},
			states:     []State{Room, Hot},
			hotMessage: "usage cpu 90% memory 10% above the high watermark cpu 80% memory 80%; 1 evicted, usage now estimated cpu 60% memory 9%",
		},
		{
			name:    "a disruption budget is counted across nodes",
			nodes:   []Node{hotNode(budgeted(p("a", 0, 3), "web")), n("hot2", 9, budgeted(p("b", 0, 3), "web")), n("cool", 0)},
			allowed: map[string]int32{"web": 1},
			want:    []string{"a>cool"},
			states:  []State{Room, Hot, Hot},
		},
		{
			name:   "the hottest node first; the run's cap",
			nodes:  []Node{hotNode(p("a", 0, 1), p("b", 0, 1)), n("hotter", 9.8, p("c", 0, 1), p("d", 0, 1)), n("cool", 0)},
			cfg:    &Config{High: cfg.High, Low: cfg.Low, MaxPerRun: 3, MaxPerNode: 5, StaleAfter: cfg.StaleAfter},
			want:   []string{"c>cool", "d>cool", "a>cool"},
			states: []State{Room, Hot, Hot},
		},
		{
			name:   "the node's cap",
			nodes:  []Node{hotNode(p("a", 0, 1), p("b", 0, 1), p("c", 0, 1)), n("cool", 0)},
			cfg:    &Config{High: cfg.High, Low: cfg.Low, MaxPerRun: 10, MaxPerNode: 2, StaleAfter: cfg.StaleAfter},
			want:   []string{"a>cool", "b>cool"},
			states: []State{Room, Hot},
		},
		{
			name:   "stale usage is not acted on, on either side",
			nodes:  []Node{stale(hotNode(p("a", 0, 2))), stale(n("cool", 0))},
			states: []State{Unmeasured, Unmeasured},
		},
		{
			name:   "a closed node is no destination",
			nodes:  []Node{hotNode(p("a", 0, 2)), closed(n("cool", 0))},
			states: []State{ClosedNode, Hot},
		},
		{
			name:   "pods being deleted are leaving: a restart does not evict again for the same heat",
			nodes:  []Node{hotNode(leaving(p("gone", 0, 3)), p("a", 0, 2)), n("cool", 0)},
			states: []State{Room, Room},
		},
		{
			name:  "pods the measurement does not hold yet count on their node by request",
			nodes: []Node{hotNode(p("a", 0, 2)), n("cool", 5, func() Pod { q := p("new", 0, 2.5); q.Unmeasured = true; return q }())},
			// cool is at 7.5 with its new pod: a's 2 would take it to 95%.
			states: []State{Room, Hot},
		},
		{
			name:   "pods that use none of the hot resource relieve nothing",
			nodes:  []Node{hotNode(Pod{Key: "idle", Usage: Amounts{0, 5e9}, Request: Amounts{0, 5e9}}), n("cool", 0)},
			states: []State{Room, Hot},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				c = *tc.cfg
			}
			d := Decide(Input{Now: now, Nodes: tc.nodes, Allowed: tc.allowed, Config: c})
			var got []string
			for _, e := range d.Evictions {
				got = append(got, e.Pod+">"+e.To)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			var states []State
			for _, v := range d.Nodes {
				states = append(states, v.State)
				if v.Node == "hot" && tc.hotMessage != "" && v.Message != tc.hotMessage {
					t.Errorf("hot node's verdict:\n got %q\nwant %q", v.Message, tc.hotMessage)
				}
			}
			if diff := cmp.Diff(tc.states, states); diff != "" {
				t.Errorf("states (-want +got):\n%s\n%v", diff, d.Nodes)
			}
		})
	}
}
