package profile

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// DeviceConfig returns the vGPU device plugin's ConfigMap the deviceshare
// plugin reads MIG geometries from, nil when it does not place vGPUs (a
// plugin is configured once, in one tier).
func DeviceConfig(cfg *configv1alpha1.SchedulerConfiguration) (*configv1alpha1.ConfigMapReference, error) {
	for i := range cfg.Tiers {
		for j := range cfg.Tiers[i].Plugins {
			pc := &cfg.Tiers[i].Plugins[j]
			if pc.Name != configv1alpha1.DeviceSharePlugin {
				continue
			}
			path := field.NewPath("tiers").Index(i).Child("plugins").Index(j).Child("args")
			args, errs := configv1alpha1.DecodePluginArgs(pc, path)
			if len(errs) > 0 {
				return nil, errs.ToAggregate()
			}
			if a := args.(*configv1alpha1.DeviceShareArgs); a.VGPU != nil && *a.VGPU {
				return a.DeviceConfig, nil
			}
		}
	}
	return nil, nil
}
