package options

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
)

var known = []string{"job", "podgroup", "queue", "hypernode"}

// parse returns options with args parsed, completed.
func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	o := NewOptions(known)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o, o.Complete()
}

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		errs []string
	}{
		"defaults":                {},
		"some controllers":        {args: []string{"--controllers=job,queue"}},
		"all but one":             {args: []string{"--controllers=*,-hypernode"}},
		"one worker":              {args: []string{"--workers=1"}},
		"several scheduler names": {args: []string{"--scheduler-name=volcano", "--scheduler-name=caldera"}},
		"unknown controller": {
			args: []string{"--controllers=job,jobs"},
			errs: []string{`--controllers: Invalid value: "jobs": unknown controller "jobs" (known: job, podgroup, queue, hypernode)`},
		},
		"unknown controller left out": {
			args: []string{"--controllers=*,-gc"},
			errs: []string{`--controllers: Invalid value: "-gc": unknown controller "gc" (known: job, podgroup, queue, hypernode)`},
		},
		"no workers": {
			args: []string{"--workers=0"},
			errs: []string{"--workers: Invalid value: 0: must be at least 1"},
		},
		"no scheduler name": {
			args: []string{"--scheduler-name="},
			errs: []string{"--scheduler-name: Required value: at least one"},
		},
		"every error": {
			args: []string{"--controllers=gc", "--workers=-1", "--scheduler-name="},
			errs: []string{
				`--controllers: Invalid value: "gc": unknown controller "gc" (known: job, podgroup, queue, hypernode)`,
				"--workers: Invalid value: -1: must be at least 1",
				"--scheduler-name: Required value: at least one",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := parse(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, err := range o.Validate() {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.errs, got); diff != "" {
				t.Errorf("Validate (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestConfigControllers: --controllers resolved against the known
// controllers, in their order.
func TestConfigControllers(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"all by default":      {want: known},
		"all but one":         {args: []string{"--controllers=*,-podgroup"}, want: []string{"job", "queue", "hypernode"}},
		"named, in any order": {args: []string{"--controllers=queue,job"}, want: []string{"job", "queue"}},
		"named and left out":  {args: []string{"--controllers=queue,job,-job"}, want: []string{"queue"}},
		"only left out":       {args: []string{"--controllers=-job"}},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := parse(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			c, err := o.Config()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.Controllers); diff != "" {
				t.Errorf("controllers (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCompleteHyperNodeDiscovery: Complete loads the discovery file, and
// Config carries it; a missing or invalid file stops start-up.
func TestCompleteHyperNodeDiscovery(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	valid := write("valid.conf", "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  config:\n    networkTopologyTypes:\n      fabric:\n      - nodeLabel: example.com/leaf\n")
	whole := write("whole.conf", "leader-elect: true\n")
	invalid := write("invalid.conf", "networkTopologyDiscovery:\n- source: ufm\n  enabled: true\n")
	for name, tc := range map[string]struct {
		args        []string
		wantErr     string
		wantSources int
		wantOff     bool
	}{
		"no file: discovery off":   {wantOff: true},
		"a file":                   {args: []string{"--hypernode-discovery-config=" + valid}, wantSources: 1},
		"a file with no section":   {args: []string{"--hypernode-discovery-config=" + whole}},
		"a missing file":           {args: []string{"--hypernode-discovery-config=" + filepath.Join(dir, "none")}, wantErr: "--hypernode-discovery-config: open "},
		"an invalid file":          {args: []string{"--hypernode-discovery-config=" + invalid}, wantErr: `--hypernode-discovery-config ` + invalid + `: invalid HyperNode discovery configuration: networkTopologyDiscovery[0].source: Unsupported value: "ufm"`},
		"a file, some controllers": {args: []string{"--controllers=job", "--hypernode-discovery-config=" + valid}, wantSources: 1},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := parse(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Complete: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			c, err := o.Config()
			if err != nil {
				t.Fatal(err)
			}
			if got := c.HyperNodeDiscovery == nil; got != tc.wantOff {
				t.Fatalf("discovery off: %v, want %v", got, tc.wantOff)
			}
			if c.HyperNodeDiscovery != nil && len(c.HyperNodeDiscovery.Discovery) != tc.wantSources {
				t.Errorf("%d discovery sources, want %d", len(c.HyperNodeDiscovery.Discovery), tc.wantSources)
			}
		})
	}
}

// TestConfigNeedsComplete: a discovery file that Complete has not loaded
// is not silently left out.
func TestConfigNeedsComplete(t *testing.T) {
	o := NewOptions(known)
	o.HyperNodeDiscoveryConfig = "/etc/caldera/hypernode.conf"
	if _, err := o.Config(); err == nil {
		t.Error("Config without Complete left the discovery file out")
	}
}

// TestConfig: the flags reach the configuration.
func TestConfig(t *testing.T) {
	o, err := parse(t, "--kubeconfig=/k", "--master=https://api:6443", "--kube-api-qps=10", "--kube-api-burst=20",
		"--leader-elect=false", "--leader-election-namespace=caldera-system", "--health-probe-bind-address=0",
		"--metrics-bind-address=:9090", "--metrics-cert-dir=/certs", "--graceful-shutdown-timeout=5s", "--workers=4", "--scheduler-name=caldera")
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Kubeconfig: "/k", Master: "https://api:6443", QPS: 10, Burst: 20,
		LeaderElectionNamespace: "caldera-system", HealthProbeBindAddress: "0", MetricsBindAddress: ":9090",
		Metrics:          metricsserving.Options{Secure: true, CertDir: "/certs"},
		GracefulShutdown: 5 * time.Second, Workers: 4, SchedulerNames: []string{"caldera"}, Controllers: known,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Config (-want,+got):\n%s", diff)
	}
}

// TestFlagsNameKnownControllers: --help lists the controllers.
func TestFlagsNameKnownControllers(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	NewOptions(known).AddFlags(fs)
	want := "controllers to run: * for all, -name to leave one out; known: job, podgroup, queue, hypernode"
	if got := fs.Lookup("controllers").Usage; got != want {
		t.Errorf("--controllers usage %q, want %q", got, want)
	}
}

// TestShardingController: the sharding controller runs only with
// --sharding-config; named without it, start-up stops and says why; an
// invalid file stops start-up naming the field.
func TestShardingController(t *testing.T) {
	testFileController(t, "sharding", "--sharding-config", "../../../../examples/sharding/sharding-controller.conf",
		"scheduler-configs:\n- name: a\n  min-nodes: 3\n  max-nodes: 2\n", "scheduler-configs[0].min-nodes: Invalid value: 3: must not be above max-nodes (2)",
		"the sharding controller needs --sharding-config", func(c *Config) bool { return c.Sharding != nil })
}

// TestDeschedulerController: the same for the load-aware descheduler and
// --descheduler-config.
func TestDeschedulerController(t *testing.T) {
	testFileController(t, "descheduler", "--descheduler-config", "../../../../examples/descheduler/descheduler.conf",
		"lowWatermark: {cpu: 90}\n", "lowWatermark.cpu: Invalid value: 90: must not be above highWatermark.cpu (80)",
		"the descheduler needs --descheduler-config", func(c *Config) bool { return c.Descheduler != nil })
}

// testFileController checks a controller that runs only with its
// configuration file (flag): off without it, on with example, refused when
// named without a file (namedErr) or given an invalid one (invalid, whose
// error is invalidErr); configured reports whether Config holds the file.
func testFileController(t *testing.T, controller, flag, example, invalid, invalidErr, namedErr string, configured func(*Config) bool) {
	all := append(slices.Clone(known), controller)
	bad := filepath.Join(t.TempDir(), "invalid")
	if err := os.WriteFile(bad, []byte(invalid), 0o644); err != nil {
		t.Fatal(err)
	}
	given := flag + "=" + example
	for name, tc := range map[string]struct {
		args    []string
		want    []string
		errs    []string
		wantErr string
	}{
		"off without a file":         {want: known},
		"on with a file":             {args: []string{given}, want: all},
		"named without a file":       {args: []string{"--controllers=job," + controller}, errs: []string{fmt.Sprintf("--controllers: Invalid value: %q: %s", controller, namedErr)}},
		"an invalid file":            {args: []string{flag + "=" + bad}, wantErr: flag + " " + bad + ": " + invalidErr},
		"a file, the controller off": {args: []string{given, "--controllers=*,-" + controller}, want: known},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions(all)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Complete()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Complete: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range o.Validate() {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.errs, got); diff != "" || tc.errs != nil {
				if diff != "" {
					t.Errorf("Validate (-want,+got):\n%s", diff)
				}
				return
			}
			c, err := o.Config()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.Controllers); diff != "" {
				t.Errorf("controllers (-want,+got):\n%s", diff)
			}
			if configured(c) != slices.Contains(tc.args, given) {
				t.Errorf("configuration loaded: %v, with args %v", configured(c), tc.args)
			}
		})
	}
}
