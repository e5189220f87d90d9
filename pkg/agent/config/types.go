// Package config is the agent's colocation configuration: what it does on
// which nodes. It is read from the ConfigMap volcano-agent-configuration,
// key colocation-config, in the agent's namespace, with the JSON layout of
// Volcano's agent (globalConfig, nodesConfig with a node selector each),
// and reloaded whenever the ConfigMap changes. Fields Volcano does not
// have are marked below.
//
// A node's configuration is the defaults, overlaid by globalConfig, then
// by each nodesConfig entry whose selector matches the node's labels, in
// order (the last match wins a field).
package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigMap name and data key, Volcano's.
const (
	ConfigMapName = "volcano-agent-configuration"
	ConfigMapKey  = "colocation-config"
)

// Configuration is the whole ConfigMap entry.
type Configuration struct {
	// GlobalConfig applies to every node.
	GlobalConfig *Colocation `json:"globalConfig,omitempty"`
	// NodesConfig applies to the nodes its selectors match.
	NodesConfig []NodeColocation `json:"nodesConfig,omitempty"`
}

// NodeColocation is the configuration of the nodes a selector matches.
type NodeColocation struct {
	Selector   *metav1.LabelSelector `json:"selector,omitempty"`
	Colocation `json:",inline"`
}

// Colocation is what the agent does on a node. Unset fields take the
// value beneath (defaults, then globalConfig, then matching nodesConfig).
type Colocation struct {
	CPUQoS           *CPUQoS           `json:"cpuQosConfig,omitempty"`
	CPUBurst         *CPUBurst         `json:"cpuBurstConfig,omitempty"`
	MemoryQoS        *MemoryQoS        `json:"memoryQosConfig,omitempty"`
	NetworkQoS       *NetworkQoS       `json:"networkQosConfig,omitempty"`
	OverSubscription *OverSubscription `json:"overSubscriptionConfig,omitempty"`
	Evicting         *Evicting         `json:"evictingConfig,omitempty"`
}

// CPUQoS sets the CPU weight of each pod's cgroup by its QoS class, and
// the CPU quota of offline pods from their kubernetes.io/batch-cpu limit.
type CPUQoS struct {
	Enable *bool `json:"enable,omitempty"`
	// Weights is the cgroup v2 cpu.weight (1 to 10000) of each class's
	// pods: LC, HLS, LS, BE. Not in Volcano. Defaults: LC and HLS 1000,
	// LS 500, BE 1 (and cpu.idle).
	Weights map[string]int64 `json:"weights,omitempty"`
}

// CPUBurst lets pods annotated volcano.sh/enable-quota-burst: "true" run
// above their CPU quota for a while (cpu.max.burst).
type CPUBurst struct {
	Enable *bool `json:"enable,omitempty"`
}

// MemoryQoS limits offline pods' memory to their kubernetes.io/batch-memory
// limit (memory.max) and makes the kernel reclaim from them first
// (memory.high below it).
type MemoryQoS struct {
	Enable *bool `json:"enable,omitempty"`
	// HighRatio puts memory.high of offline pods at this share of their
	// memory.max, 0 to 1. Not in Volcano. Default 0.9.
	HighRatio *float64 `json:"highRatio,omitempty"`
}

// NetworkQoS is Volcano's network bandwidth control. This version reads
// and validates it and refuses to enable it.
type NetworkQoS struct {
	Enable                          *bool  `json:"enable,omitempty"`
	OnlineBandwidthWatermarkPercent *int   `json:"onlineBandwidthWatermarkPercent,omitempty"`
	OfflineLowBandwidthPercent      *int   `json:"offlineLowBandwidthPercent,omitempty"`
	OfflineHighBandwidthPercent     *int   `json:"offlineHighBandwidthPercent,omitempty"`
	QoSCheckInterval                *int64 `json:"qosCheckInterval,omitempty"`
}

// OverSubscription publishes what online pods requested and do not use as
// kubernetes.io/batch-cpu and kubernetes.io/batch-memory on the node.
type OverSubscription struct {
	Enable *bool `json:"enable,omitempty"`
	// Types lists the resources published, "cpu,memory" or one of them.
	Types *string `json:"overSubscriptionTypes,omitempty"`
	// Ratio is the share of the unused requests published, 0 to 1 (the
	// rest is headroom for online pods to grow into). Not in Volcano,
	// whose agent takes it as a flag in percent. Default 0.6.
	Ratio *float64 `json:"ratio,omitempty"`
	// SafetyMargin is the share of the node's allocatable resources never
	// published, 0 to 1. Not in Volcano. Default 0.05.
	SafetyMargin *float64 `json:"safetyMargin,omitempty"`
}

// Evicting evicts offline pods while the node's usage is too high.
type Evicting struct {
	// Enable turns eviction on. Not in Volcano. Default true.
	Enable *bool `json:"enable,omitempty"`
	// Usage, in percent of the node's allocatable, above which offline
	// pods are evicted and no new ones are admitted (the node is tainted
	// volcano.sh/offline-job-evicting:NoSchedule), and below which,
	// for both resources, new ones are admitted again.
	CPUHighWatermark    *int `json:"evictingCPUHighWatermark,omitempty"`
	MemoryHighWatermark *int `json:"evictingMemoryHighWatermark,omitempty"`
	CPULowWatermark     *int `json:"evictingCPULowWatermark,omitempty"`
	MemoryLowWatermark  *int `json:"evictingMemoryLowWatermark,omitempty"`
	// MinInterval is the least time between two evictions on a node, so
	// that one eviction's effect is seen before the next. Not in Volcano.
	// Default 10s.
	MinInterval *metav1.Duration `json:"minInterval,omitempty"`
}
