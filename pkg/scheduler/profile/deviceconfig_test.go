package profile

import (
	"testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// TestDeviceConfig: the vGPU device ConfigMap is read only when a tier
// places vGPUs, and defaults to Volcano's.
func TestDeviceConfig(t *testing.T) {
	load := func(conf string) *configv1alpha1.SchedulerConfiguration {
		t.Helper()
		cfg, err := config.Load([]byte(conf), NameRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ref, err := DeviceConfig(load("actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n"))
	if err != nil || ref != nil {
		t.Errorf("without vGPUs: %+v, %v; want none", ref, err)
	}
	ref, err = DeviceConfig(load("actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n    arguments:\n      deviceshare.VGPUEnable: true\n"))
	if err != nil || ref == nil || *ref != (configv1alpha1.ConfigMapReference{Namespace: "kube-system", Name: "volcano-vgpu-device-config"}) {
		t.Errorf("vGPUs: %+v, %v; want kube-system/volcano-vgpu-device-config", ref, err)
	}
	ref, err = DeviceConfig(load("actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n    arguments:\n      deviceshare.VGPUEnable: true\n      deviceshare.KnownGeometriesCMName: gpu-config\n      deviceshare.KnownGeometriesCMNamespace: gpu-operator\n"))
	if err != nil || ref == nil || *ref != (configv1alpha1.ConfigMapReference{Namespace: "gpu-operator", Name: "gpu-config"}) {
		t.Errorf("a named ConfigMap: %+v, %v; want gpu-operator/gpu-config", ref, err)
	}
}
