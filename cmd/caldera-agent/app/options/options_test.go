package options

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(o *Options)
		err  string
	}{
		"defaults with a node":  {edit: func(o *Options) {}},
		"no node":               {edit: func(o *Options) { o.NodeName = "" }, err: "--node-name: required"},
		"unknown cgroup driver": {edit: func(o *Options) { o.CgroupDriver = "cgroupv1" }, err: `--cgroup-driver: unknown cgroup driver "cgroupv1" (known: cgroupfs, systemd)`},
		"zero interval":         {edit: func(o *Options) { o.Interval = 0 }, err: "--interval: 0s must be positive"},
		"negative resync":       {edit: func(o *Options) { o.Resync = -time.Second }, err: "--resync: -1s must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			o.NodeName = "n"
			tc.edit(o)
			err := o.Validate()
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
