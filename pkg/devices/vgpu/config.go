package vgpu

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// The vGPU device plugin's configuration is a ConfigMap (by default
// volcano-vgpu-device-config in kube-system) whose key device-config.yaml
// holds, under nvidia.knownMigGeometries, the MIG geometries of the card
// models it cuts:
//
//	nvidia:
//	  knownMigGeometries:
//	  - models: ["A100-SXM4-40GB", "A100-40GB-PCIe"]
//	    allowedGeometries:
//	    - group: group1
//	      geometries:
//	      - {name: 1g.5gb, memory: 5120, count: 7}
//
// memory is in MiB. A card takes the first entry one of whose models is
// part of its type.

// DeviceConfigKey is the ConfigMap key that holds the configuration.
const DeviceConfigKey = "device-config.yaml"

type deviceConfig struct {
	Nvidia *struct {
		KnownMigGeometries *[]struct {
			Models            []string `json:"models"`
			AllowedGeometries []struct {
				Group      string `json:"group"`
				Geometries []struct {
					Name   string `json:"name"`
					Memory int64  `json:"memory"`
					Count  int    `json:"count"`
				} `json:"geometries"`
			} `json:"allowedGeometries"`
		} `json:"knownMigGeometries"`
	} `json:"nvidia"`
}

// ParseDeviceConfig reads the MIG geometries of a device configuration.
// It returns nil (the shipped geometries apply) when the configuration
// lists none, and an error naming the field at fault when an entry cannot
// be used; the other settings of the file are not read.
func ParseDeviceConfig(data []byte) ([]Geometry, error) {
	var c deviceConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", DeviceConfigKey, err)
	}
	if c.Nvidia == nil || c.Nvidia.KnownMigGeometries == nil {
		return nil, nil
	}
	path := field.NewPath("nvidia", "knownMigGeometries")
	var errs field.ErrorList
	out := []Geometry{}
	for i, m := range *c.Nvidia.KnownMigGeometries {
		mp := path.Index(i)
		g := Geometry{}
		for j, model := range m.Models {
			if strings.TrimSpace(model) == "" {
				errs = append(errs, field.Required(mp.Child("models").Index(j), "a part of a card type"))
				continue
			}
			g.Models = append(g.Models, model)
		}
		if len(m.Models) == 0 {
			errs = append(errs, field.Required(mp.Child("models"), "the card models the geometries apply to"))
		}
		if len(m.AllowedGeometries) == 0 {
			errs = append(errs, field.Required(mp.Child("allowedGeometries"), "at least one geometry"))
		}
		for j, a := range m.AllowedGeometries {
			ap := mp.Child("allowedGeometries").Index(j)
			grp := Group{Name: a.Group}
			if a.Group == "" {
				errs = append(errs, field.Required(ap.Child("group"), "the group's name, written in the device IDs"))
			}
			if len(a.Geometries) == 0 {
				errs = append(errs, field.Required(ap.Child("geometries"), "the instances the group holds"))
			}
			for k, in := range a.Geometries {
				ip := ap.Child("geometries").Index(k)
				if in.Name == "" {
					errs = append(errs, field.Required(ip.Child("name"), "the MIG profile, such as 1g.5gb"))
				}
				if in.Memory <= 0 {
					errs = append(errs, field.Invalid(ip.Child("memory"), in.Memory, "must be the instance's memory in MiB, above 0"))
				}
				if in.Count <= 0 {
					errs = append(errs, field.Invalid(ip.Child("count"), in.Count, "must be how many such instances the group holds, above 0"))
				}
				grp.Instances = append(grp.Instances, Instance{Name: in.Name, MemoryMiB: in.Memory, Count: in.Count})
			}
			if n := grp.slots(); n > maxPositions {
				errs = append(errs, field.Invalid(ap.Child("geometries"), n, fmt.Sprintf("a group holds at most %d instances", maxPositions)))
			}
			g.Groups = append(g.Groups, grp)
		}
		out = append(out, g)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", DeviceConfigKey, errs.ToAggregate())
	}
	return out, nil
}
