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
	plain := &DeviceShareArgs{}
	plain.Default()
	if *plain.VGPU || !*plain.GPUSharing || !*plain.GPUNumber {
		t.Errorf("the defaults are %+v, want sharing and whole cards, no vGPU", plain)
	}
	for _, tc := range []struct {
		args DeviceShareArgs
		want string
	}{
		{DeviceShareArgs{VGPU: new(true), GPUSharing: new(true)}, "args.gpuSharing: Invalid value: true: may not be on with vgpu"},
		{DeviceShareArgs{VGPU: new(true), GPUNumber: new(true)}, "args.gpuNumber: Invalid value: true: may not be on with vgpu"},
		{DeviceShareArgs{VGPU: new(true), SchedulePolicy: new(DeviceSharePolicyFGD)}, `args.schedulePolicy: Invalid value: "fgd": vGPUs are placed by binpack or spread`},
	} {
		a := tc.args
		a.Default()
		if errs := a.Validate(field.NewPath("args")); !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%+v: errors %v, want %q", tc.args, errs, tc.want)
		}
	}
}
