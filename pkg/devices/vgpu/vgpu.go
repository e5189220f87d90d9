// Package vgpu is the contract of virtual GPUs as Volcano's vGPU device
// plugin speaks it, and the choice of cards for a pod: pure functions, no
// client.
//
// A node's device plugin registers its cards in the node annotation
// volcano.sh/node-vgpu-register, one record per card, each ended by ":",
// with the fields uuid,count,memory,type,health,mode: how many shares
// (vGPUs) the card takes, its memory in MiB, its model, whether it is
// healthy, and its mode (hami-core, or mig when it is cut into MIG
// instances). A pod asks per container for volcano.sh/vgpu-number shares,
// each on a different card, of volcano.sh/vgpu-memory MiB (or
// volcano.sh/vgpu-memory-percentage of the card's memory; the whole card
// when it asks for neither) and volcano.sh/vgpu-cores percent of the
// card's compute. At bind the scheduler writes the chosen devices into the
// pod's annotations (EncodePod), which the device plugin reads when the
// containers start.
package vgpu

import (
	"fmt"
	"strconv"
	"strings"
)

// The node annotation a device plugin registers its cards in.
const RegisterAnnotation = "volcano.sh/node-vgpu-register"

// The resources a container asks for.
const (
	ResourceNumber           = "volcano.sh/vgpu-number"
	ResourceMemory           = "volcano.sh/vgpu-memory"
	ResourceMemoryPercentage = "volcano.sh/vgpu-memory-percentage"
	ResourceCores            = "volcano.sh/vgpu-cores"
)

// The pod annotations the scheduler writes at bind, and the phase the
// device plugin moves on.
const (
	NodeAnnotation              = "volcano.sh/vgpu-node"
	TimeAnnotation              = "volcano.sh/vgpu-time"
	IDsAnnotation               = "volcano.sh/vgpu-ids-new"
	DevicesToAllocateAnnotation = "volcano.sh/devices-to-allocate"
	BindPhaseAnnotation         = "volcano.sh/bind-phase"
	BindTimeAnnotation          = "volcano.sh/bind-time"
	// BindPhaseAllocating is the phase the scheduler writes; the device
	// plugin sets success or failed.
	BindPhaseAllocating = "allocating"
)

// The pod annotations that narrow the cards a pod may get.
const (
	ModeAnnotation    = "volcano.sh/vgpu-mode"
	UseTypeAnnotation = "nvidia.com/use-gputype"
	NoUseTypeAnno     = "nvidia.com/nouse-gputype"
	UseUUIDAnnotation = "volcano.sh/vgpu-use-gpuuuid"
	NoUseUUIDAnno     = "volcano.sh/vgpu-nouse-gpuuuid"
)

// Card modes.
const (
	ModeHAMiCore = "hami-core"
	ModeMIG      = "mig"
)

// Card is one registered card.
type Card struct {
	UUID string
	// Shares is how many vGPUs the card takes at most.
	Shares int
	// MemoryMiB is the card's memory.
	MemoryMiB int64
	// Type is the card's model, as registered ("NVIDIA-NVIDIA A100-SXM4-40GB").
	Type    string
	Healthy bool
	Mode    string
}

// ParseRegistration reads a node's volcano.sh/node-vgpu-register value.
// A record with another number of fields, or a field that does not read,
// is an error that names the record and the field.
func ParseRegistration(s string) ([]Card, error) {
	var cards []Card
	for i, rec := range strings.Split(s, ":") {
		if strings.TrimSpace(rec) == "" {
			continue
		}
		f := strings.Split(rec, ",")
		if len(f) != 6 {
			return nil, fmt.Errorf("card %d: %d fields, want 6 (uuid,count,memory,type,health,mode)", i, len(f))
		}
		c := Card{UUID: f[0], Type: f[3], Mode: f[5]}
		if c.UUID == "" {
			return nil, fmt.Errorf("card %d: empty uuid", i)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("card %d (%s): count %q is not a number of shares", i, c.UUID, f[1])
		}
		c.Shares = n
		m, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || m < 0 {
			return nil, fmt.Errorf("card %d (%s): memory %q is not a number of MiB", i, c.UUID, f[2])
		}
		c.MemoryMiB = m
		h, err := strconv.ParseBool(f[4])
		if err != nil {
			return nil, fmt.Errorf("card %d (%s): health %q is not true or false", i, c.UUID, f[4])
		}
		c.Healthy = h
		if c.Mode != ModeHAMiCore && c.Mode != ModeMIG {
			// An unknown mode is the default mode.
			c.Mode = ModeHAMiCore
		}
		cards = append(cards, c)
	}
	return cards, nil
}

// FormatRegistration writes cards as a device plugin registers them.
func FormatRegistration(cards []Card) string {
	var b strings.Builder
	for _, c := range cards {
		fmt.Fprintf(&b, "%s,%d,%d,%s,%t,%s:", c.UUID, c.Shares, c.MemoryMiB, c.Type, c.Healthy, c.Mode)
	}
	return b.String()
}

// Device is one share a container got: on which card, of which type,
// with how much memory (MiB) and compute (percent).
type Device struct {
	UUID      string
	Type      string
	MemoryMiB int64
	Cores     int
}

// DeviceType is the type the scheduler writes for NVIDIA cards.
const DeviceType = "NVIDIA"

// EncodePod writes the devices of a pod's vGPU containers, in container
// order, as volcano.sh/vgpu-ids-new holds them: containers separated by
// ";", each device uuid,type,memory,cores followed by ":".
func EncodePod(containers [][]Device) string {
	parts := make([]string, len(containers))
	for i, devs := range containers {
		var b strings.Builder
		for _, d := range devs {
			fmt.Fprintf(&b, "%s,%s,%d,%d:", d.UUID, d.Type, d.MemoryMiB, d.Cores)
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, ";")
}

// DecodePod reads what EncodePod writes.
func DecodePod(s string) ([][]Device, error) {
	if s == "" {
		return nil, nil
	}
	var out [][]Device
	for ci, part := range strings.Split(s, ";") {
		var devs []Device
		for di, rec := range strings.Split(part, ":") {
			if rec == "" {
				continue
			}
			f := strings.Split(rec, ",")
			if len(f) != 4 {
				return nil, fmt.Errorf("container %d, device %d: %d fields, want 4 (uuid,type,memory,cores)", ci, di, len(f))
			}
			m, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("container %d, device %d: memory %q is not a number of MiB", ci, di, f[2])
			}
			c, err := strconv.Atoi(f[3])
			if err != nil {
				return nil, fmt.Errorf("container %d, device %d: cores %q is not a percent", ci, di, f[3])
			}
			devs = append(devs, Device{UUID: f[0], Type: f[1], MemoryMiB: m, Cores: c})
		}
		out = append(out, devs)
	}
	return out, nil
}
