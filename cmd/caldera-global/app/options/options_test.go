package options

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestValidateClusterInventory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(o *Options)
		wantErr string
	}{
		{"defaults", func(*Options) {}, ""},
		{"cluster-api", func(o *Options) { o.ClusterInventory, o.ClusterAPINamespace = InventoryClusterAPI, "fleet" }, ""},
		{"unknown inventory", func(o *Options) { o.ClusterInventory = "capi" }, `--cluster-inventory: Unsupported value: "capi": supported values: "karmada", "cluster-api"`},
		{"cluster-api flags without it", func(o *Options) { o.ClusterAPIKubeconfig = "/etc/mgmt" }, "--cluster-api-kubeconfig: Forbidden: needs --cluster-inventory=cluster-api"},
		{"cluster-api namespace without it", func(o *Options) { o.ClusterAPINamespace = "fleet" }, "--cluster-api-namespace: Forbidden: needs --cluster-inventory=cluster-api"},
		{"bad namespace", func(o *Options) { o.ClusterInventory, o.ClusterAPINamespace = InventoryClusterAPI, "Fleet" }, `--cluster-api-namespace: Invalid value: "Fleet": a lowercase RFC 1123 label`},
		{"negative apply failure grace", func(o *Options) { o.ApplyFailureGrace = -time.Second }, `--apply-failure-grace: Invalid value: "-1s": must not be negative`},
	} {
		o := NewOptions()
		tc.set(o)
		if err := o.Complete(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err := o.Validate().ToAggregate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}

// TestValidate: every flag checked names itself in its error.
func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"defaults": {},
		"durations": {
			args: []string{"--starvation-wait=-1s", "--coalesce=0", "--heartbeat=-1s", "--report-grace=-1m", "--hyperjob-start-timeout=0"},
			want: []string{
				`--starvation-wait: Invalid value: "-1s": must not be negative`,
				`--coalesce: Invalid value: "0s": must be positive`,
				`--heartbeat: Invalid value: "-1s": must be positive`,
				`--report-grace: Invalid value: "-1m0s": must not be negative`,
				`--hyperjob-start-timeout: Invalid value: "0s": must be positive`,
			},
		},
		"zero durations that mean never or at once": {
			args: []string{"--starvation-wait=0", "--report-grace=0", "--apply-failure-grace=0"},
		},
		"data providers": {
			args: []string{"--data-provider=s3=https://catalog.example.com", "--data-provider=hdfs=http://10.0.0.1:8080/lookup"},
		},
		"bad data providers": {
			args: []string{"--data-provider=catalog.example.com", "--data-provider==https://catalog.example.com",
				"--data-provider=s3=ftp://catalog.example.com", "--data-provider=s3=https://a.example.com", "--data-provider=s3=https://b.example.com"},
			want: []string{
				`--data-provider: Invalid value: "catalog.example.com": must be system=URL`,
				`--data-provider: Invalid value: "=https://catalog.example.com": must be system=URL`,
				`--data-provider: Invalid value: "s3=ftp://catalog.example.com": the URL must be http or https with a host`,
				`--data-provider: Invalid value: "s3=https://b.example.com": system "s3" is given twice`,
			},
		},
		"bad pool label": {
			args: []string{"--pool-labels=nvidia.com/gpu.product,a b"},
			want: []string{`--pool-labels: Invalid value: "a b": name part must consist of alphanumeric characters`},
		},
		"bad lease namespace": {
			args: []string{"--leader-election-namespace=Caldera"},
			want: []string{`--leader-election-namespace: Invalid value: "Caldera": a lowercase RFC 1123 label`},
		},
		"lease namespace without leader election": {
			args: []string{"--leader-elect=false", "--leader-election-namespace="},
		},
		"the server's flags": {
			args: []string{"--port=0"},
			want: []string{"--port: Invalid value: 0: must be a port, from 1 to 65535"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := parse(t, tc.args...)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %q, want %d", errs, len(tc.want))
			}
			for i, err := range errs {
				if !strings.HasPrefix(err, tc.want[i]) {
					t.Errorf("error %q, want one beginning %q", err, tc.want[i])
				}
			}
		})
	}
}

// parse returns the options with args parsed and completed, and the
// messages of their validation errors.
func parse(t *testing.T, args ...string) (*Options, []string) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, err := range o.Validate() {
		errs = append(errs, err.Error())
	}
	return o, errs
}

// TestConfig: the configuration carries the parsed data providers and the
// dispatcher's timings.
func TestConfig(t *testing.T) {
	o, errs := parse(t, "--data-provider=s3=https://catalog.example.com", "--data-provider=hdfs=http://10.0.0.1:8080/lookup",
		"--starvation-wait=1m", "--coalesce=10ms", "--heartbeat=5s", "--report-grace=0", "--apply-failure-grace=30s", "--hyperjob-start-timeout=2m",
		"--cluster-inventory=cluster-api", "--cluster-api-namespace=fleet", "--pool-labels=gpu")
	if errs != nil {
		t.Fatal(errs)
	}
	c, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"s3": "https://catalog.example.com", "hdfs": "http://10.0.0.1:8080/lookup"}, c.DataProviders); diff != "" {
		t.Errorf("data providers (-want,+got):\n%s", diff)
	}
	gotTimings := []time.Duration{c.Dispatcher.StarvationWait, c.Dispatcher.Coalesce, c.Dispatcher.Heartbeat, c.Dispatcher.ReportGrace, c.Dispatcher.ApplyFailureGrace, c.HyperJobStartTimeout}
	wantTimings := []time.Duration{time.Minute, 10 * time.Millisecond, 5 * time.Second, 0, 30 * time.Second, 2 * time.Minute}
	if diff := cmp.Diff(wantTimings, gotTimings); diff != "" {
		t.Errorf("timings (-want,+got):\n%s", diff)
	}
	if c.Dispatcher.Inventory != nil || c.Dispatcher.Metrics != nil {
		t.Error("the options chose the dispatcher's inventory or metrics")
	}
	got := []any{c.ClusterInventory, c.ClusterAPINamespace, c.PoolLabels, c.LeaderElect, c.Serving.ServiceName}
	want := []any{InventoryClusterAPI, "fleet", []string{"gpu"}, true, "caldera-global"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Config (-want,+got):\n%s", diff)
	}
}

// TestConfigNeedsComplete: without Complete the data providers are not
// parsed, and Config says so rather than run without them.
func TestConfigNeedsComplete(t *testing.T) {
	o := NewOptions()
	o.DataProviders = []string{"s3=https://catalog.example.com"}
	if _, err := o.Config(); err == nil {
		t.Error("Config without Complete")
	}
}
