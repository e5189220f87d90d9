package config

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestExample: the ConfigMap of examples/agent is valid and means what
// docs/colocation.md says.
func TestExample(t *testing.T) {
	raw, err := os.ReadFile("../../../examples/agent/colocation-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != ConfigMapName {
		t.Errorf("ConfigMap %s, want %s", cm.Name, ConfigMapName)
	}
	c, err := Parse([]byte(cm.Data[ConfigMapKey]))
	if err != nil {
		t.Fatal(err)
	}
	cpuNode, err := c.ForNode(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	gpuNode, err := c.ForNode(map[string]string{"node.example.com/pool": "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	if !cpuNode.CPUQoS || !cpuNode.CPUBurst || !cpuNode.MemoryQoS || !cpuNode.OverCPU || !cpuNode.OverMemory || cpuNode.CPUHighWatermark != 80 {
		t.Errorf("other nodes: %+v", cpuNode)
	}
	if !gpuNode.OverCPU || gpuNode.OverMemory || gpuNode.CPUHighWatermark != 70 || gpuNode.MemoryHighWatermark != 60 {
		t.Errorf("GPU nodes: %+v", gpuNode)
	}
}
