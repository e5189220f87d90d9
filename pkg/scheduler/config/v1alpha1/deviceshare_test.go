package v1alpha1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestDeviceShareVGPU: the vGPU kind turns the other two off by default,
// and may not be on with either, nor placed by fgd.
func TestDeviceShareVGPU(t *testing.T) {
	a := &DeviceShareArgs{VGPU: new(true)}
	a.Default()
	if *a.GPUSharing || *a.GPUNumber || a.Validate(field.NewPath("args")) != nil {
		t.Errorf("vgpu alone defaults to %+v, errors %v", a, a.Validate(field.NewPath("args")))
	}
	if r := a.DeviceConfig; r == nil || *r != (ConfigMapReference{"kube-system", "volcano-vgpu-device-config"}) {
		t.Errorf("vgpu's device ConfigMap defaults to %+v, want kube-system/volcano-vgpu-device-config", r)
	}
	named := &DeviceShareArgs{VGPU: new(true), DeviceConfig: &ConfigMapReference{Name: "gpu-config"}}
	named.Default()
	if *named.DeviceConfig != (ConfigMapReference{"kube-system", "gpu-config"}) {
		t.Errorf("a named device ConfigMap defaults to %+v, want it in kube-system", named.DeviceConfig)
	}
	plain := &DeviceShareArgs{}
	plain.Default()
	if *plain.VGPU || !*plain.GPUSharing || !*plain.GPUNumber || plain.DeviceConfig != nil {
		t.Errorf("the defaults are %+v, want sharing and whole cards, no vGPU, no device ConfigMap", plain)
	}
	for _, tc := range []struct {
		args DeviceShareArgs
		want string
	}{
		{DeviceShareArgs{VGPU: new(true), GPUSharing: new(true)}, "args.gpuSharing: Invalid value: true: may not be on with vgpu"},
		{DeviceShareArgs{VGPU: new(true), GPUNumber: new(true)}, "args.gpuNumber: Invalid value: true: may not be on with vgpu"},
		{DeviceShareArgs{VGPU: new(true), SchedulePolicy: new(DeviceSharePolicyFGD)}, `args.schedulePolicy: Invalid value: "fgd": vGPUs are placed by binpack or spread`},
		{DeviceShareArgs{VGPU: new(true), DeviceConfig: &ConfigMapReference{Namespace: "Kube_System"}}, `args.deviceConfig.namespace: Invalid value: "Kube_System"`},
		{DeviceShareArgs{VGPU: new(true), DeviceConfig: &ConfigMapReference{Name: "GPU config"}}, `args.deviceConfig.name: Invalid value: "GPU config"`},
	} {
		a := tc.args
		a.Default()
		if errs := a.Validate(field.NewPath("args")); !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%+v: errors %v, want %q", tc.args, errs, tc.want)
		}
	}
}
