package vgpu

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDeviceConfig(t *testing.T) {
	h100 := `
nvidia:
  resourceCountName: volcano.sh/vgpu-number
  knownMigGeometries:
  - models: ["H100-SXM5-80GB", "H100 80GB HBM3"]
    allowedGeometries:
    - group: group1
      geometries:
      - {name: 1g.10gb, memory: 10240, count: 7}
    - group: group2
      geometries:
      - {name: 3g.40gb, memory: 40960, count: 2}
`
	got, err := ParseDeviceConfig([]byte(h100))
	if err != nil {
		t.Fatal(err)
	}
	want := []Geometry{{Models: []string{"H100-SXM5-80GB", "H100 80GB HBM3"}, Groups: []Group{
		{Name: "group1", Instances: []Instance{{"1g.10gb", 10240, 7}}},
		{Name: "group2", Instances: []Instance{{"3g.40gb", 40960, 2}}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("geometries (-want,+got):\n%s", diff)
	}
	// The configured geometries replace the shipped ones: an A100 has none.
	if g := GeometryOf(got, "NVIDIA-NVIDIA H100 80GB HBM3"); g == nil || g.Groups[1].Name != "group2" {
		t.Errorf("H100 geometry %+v", g)
	}
	if g := GeometryOf(got, "NVIDIA-NVIDIA A100-SXM4-40GB"); g != nil {
		t.Errorf("A100 geometry %+v under a configuration without it, want none", g)
	}
	if g := GeometryOf(nil, "NVIDIA-NVIDIA A100-SXM4-40GB"); g == nil || len(g.Groups) != 4 {
		t.Errorf("shipped A100 geometry %+v", g)
	}

	// A configuration that lists none leaves the shipped ones.
	for _, none := range []string{"", "nvidia: {}", "nvidia:\n  deviceSplitCount: 10\n"} {
		if got, err := ParseDeviceConfig([]byte(none)); err != nil || got != nil {
			t.Errorf("%q: %v, %v; want nil, nil", none, got, err)
		}
	}
	// An empty list is a list: no model is cut.
	if got, err := ParseDeviceConfig([]byte("nvidia:\n  knownMigGeometries: []\n")); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty list: %v, %v; want an empty list", got, err)
	}

	for _, tc := range []struct{ name, config, want string }{
		{"not yaml", "nvidia: [", "device-config.yaml: "},
		{"no models", `
nvidia:
  knownMigGeometries:
  - allowedGeometries:
    - group: g
      geometries: [{name: 1g.5gb, memory: 5120, count: 7}]
`, "nvidia.knownMigGeometries[0].models: Required value"},
		{"zero memory", `
nvidia:
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - group: g
      geometries: [{name: 1g.6gb, memory: 0, count: 4}]
`, "nvidia.knownMigGeometries[0].allowedGeometries[0].geometries[0].memory: Invalid value: 0"},
		{"no group name", `
nvidia:
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - geometries: [{name: 1g.6gb, memory: 6144, count: 4}]
`, "nvidia.knownMigGeometries[0].allowedGeometries[0].group: Required value"},
		{"too many", `
nvidia:
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - group: g
      geometries: [{name: tiny, memory: 1, count: 65}]
`, "at most 64 instances"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDeviceConfig([]byte(tc.config))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
