package options

import (
	"strings"
	"testing"
	"time"
)

func TestValidateClusterInventory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(o *Options)
		wantErr string
	}{
		{"defaults", func(*Options) {}, ""},
		{"cluster-api", func(o *Options) { o.ClusterInventory, o.ClusterAPINamespace = InventoryClusterAPI, "fleet" }, ""},
		{"unknown inventory", func(o *Options) { o.ClusterInventory = "capi" }, `--cluster-inventory: "capi" is not one of karmada, cluster-api`},
		{"cluster-api flags without it", func(o *Options) { o.ClusterAPIKubeconfig = "/etc/mgmt" }, "--cluster-api-kubeconfig and --cluster-api-namespace need --cluster-inventory=cluster-api"},
		{"bad namespace", func(o *Options) { o.ClusterInventory, o.ClusterAPINamespace = InventoryClusterAPI, "Fleet" }, "--cluster-api-namespace: a lowercase RFC 1123 label"},
		{"negative apply failure grace", func(o *Options) { o.ApplyFailureGrace = -time.Second }, "--apply-failure-grace: -1s must not be negative"},
	} {
		o := NewOptions()
		tc.set(o)
		err := o.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}
