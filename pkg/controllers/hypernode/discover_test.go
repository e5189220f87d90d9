package hypernode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const twoTiers = `networkTopologyDiscovery:
- source: label
  enabled: true
  interval: 5m
  config:
    networkTopologyTypes:
      fabric:
      - nodeLabel: example.com/spine
      - nodeLabel: example.com/leaf
      - nodeLabel: kubernetes.io/hostname
`

func node(name, spine, leaf string) *corev1.Node {
	w := st.MakeNode(name)
	if spine != "" {
		w = w.Label("example.com/spine", spine)
	}
	if leaf != "" {
		w = w.Label("example.com/leaf", leaf)
	}
	return w.Obj()
}

// summary is name: tier/tierName members.
func summary(hns []*topologyv1alpha1.HyperNode) []string {
	var out []string
	for _, hn := range hns {
		var members []string
		for _, m := range hn.Spec.Members {
			members = append(members, string(m.Type)+":"+m.Selector.ExactMatch.Name)
		}
		out = append(out, fmt.Sprintf("%s: %d/%s %s", hn.Name, hn.Spec.Tier, hn.Spec.TierName, strings.Join(members, ",")))
	}
	return out
}

func TestDiscover(t *testing.T) {
	cfg, err := LoadConfig([]byte(twoTiers))
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*corev1.Node{
		node("n3", "s1", "l2"), node("n1", "s1", "l1"), node("n2", "s1", "l1"),
		node("n4", "s2", "L_3"),
		node("loose", "", "l1"), // no spine label: in no tree
	}
	want := []string{
		"fabric-t1-l-3-" + hashOf("L_3") + ": 1/example.com/leaf Node:n4",
		"fabric-t1-l1: 1/example.com/leaf Node:n1,Node:n2",
		"fabric-t1-l2: 1/example.com/leaf Node:n3",
		"fabric-t2-s1: 2/example.com/spine HyperNode:fabric-t1-l1,HyperNode:fabric-t1-l2",
		"fabric-t2-s2: 2/example.com/spine HyperNode:fabric-t1-l-3-" + hashOf("L_3"),
	}
	got := Discover(cfg, nodes)
	if diff := cmp.Diff(want, summary(got)); diff != "" {
		t.Errorf("HyperNodes (-want,+got):\n%s", diff)
	}
	for _, hn := range got {
		if hn.Labels[DiscoveredByLabel] != LabelSource || hn.Labels[TopologyTypeLabel] != "fabric" {
			t.Errorf("%s labels %v, want discovery's", hn.Name, hn.Labels)
		}
	}
	if cfg.Interval().String() != "5m0s" {
		t.Errorf("interval %v, want 5m", cfg.Interval())
	}
}

func hashOf(v string) string {
	name := hyperNodeName("x", 1, v)
	return name[strings.LastIndex(name, "-")+1:]
}

func TestDiscoverLevelsWithSelectorsAndTierNames(t *testing.T) {
	cfg, err := LoadConfig([]byte(`networkTopologyDiscovery:
- source: label
  enabled: true
  config:
    networkTopologyTypes:
      gpu:
        nodeSelector:
          matchLabels:
            pool: gpu
        levels:
        - nodeLabel: example.com/leaf
          tierName: leaf
`))
	if err != nil {
		t.Fatal(err)
	}
	gpu := node("g1", "", "l1")
	gpu.Labels["pool"] = "gpu"
	got := Discover(cfg, []*corev1.Node{gpu, node("c1", "", "l1")})
	if diff := cmp.Diff([]string{"gpu-t1-l1: 1/leaf Node:g1"}, summary(got)); diff != "" {
		t.Errorf("HyperNodes (-want,+got):\n%s", diff)
	}
}

func TestDiscoverOff(t *testing.T) {
	cfg, err := LoadConfig([]byte(strings.Replace(twoTiers, "enabled: true", "enabled: false", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := Discover(cfg, []*corev1.Node{node("n1", "s1", "l1")}); len(got) != 0 || cfg.Interval() != 0 {
		t.Errorf("discovery off made %v, interval %v", summary(got), cfg.Interval())
	}
}

func TestLoadConfigErrors(t *testing.T) {
	cases := map[string]struct {
		conf string
		want string
	}{
		"a source this version lacks": {
			conf: "networkTopologyDiscovery:\n- source: ufm\n  enabled: true\n",
			want: `networkTopologyDiscovery[0].source: Unsupported value: "ufm": supported values: "label"`,
		},
		"no levels above the nodes": {
			conf: "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  config:\n    networkTopologyTypes:\n      t:\n      - nodeLabel: kubernetes.io/hostname\n",
			want: "networkTopologyDiscovery[0].config.networkTopologyTypes[t].levels: Required value: at least one node label above kubernetes.io/hostname",
		},
		"the hostname above other levels": {
			conf: "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  config:\n    networkTopologyTypes:\n      t:\n      - nodeLabel: kubernetes.io/hostname\n      - nodeLabel: rack\n",
			want: `networkTopologyDiscovery[0].config.networkTopologyTypes[t].levels[0].nodeLabel: Invalid value: "kubernetes.io/hostname": stands for the nodes themselves and may only be the last level`,
		},
		"a type name that cannot begin names": {
			conf: "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  config:\n    networkTopologyTypes:\n      My_Fabric:\n      - nodeLabel: rack\n",
			want: "networkTopologyDiscovery[0].config.networkTopologyTypes[My_Fabric]: Invalid value",
		},
		"a misspelled field": {
			conf: "networkTopologyDiscovery:\n- source: label\n  enabld: true\n",
			want: `reading networkTopologyDiscovery: error unmarshaling JSON: while decoding JSON: json: unknown field "enabld"`,
		},
		"a negative interval": {
			conf: "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  interval: -1m\n  config:\n    networkTopologyTypes:\n      t:\n      - nodeLabel: rack\n",
			want: `networkTopologyDiscovery[0].interval: Invalid value: "-1m0s": must be positive`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig([]byte(tc.conf))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadConfigIgnoresOtherSections(t *testing.T) {
	cfg, err := LoadConfig([]byte("resyncPeriod: 30s\n" + twoTiers))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.labelSource() == nil {
		t.Error("the label source was not read")
	}
}

// TestExamples loads every discovery configuration under
// examples/controller.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../../examples/controller/*.conf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if cfg.labelSource() == nil {
			t.Errorf("%s: the label source is not enabled", f)
		}
	}
}
