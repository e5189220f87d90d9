package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
)

// configure parses args, completes and validates the options and returns
// their configuration, as the command does.
func configure(t *testing.T, args ...string) (*Config, error) {
	t.Helper()
	o := NewOptions(profile.NameRegistry())
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(); err != nil {
		return nil, err
	}
	if errs := o.Validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return o.Config()
}

func loadConfig(t *testing.T, args ...string) error {
	t.Helper()
	c, err := configure(t, args...)
	if err == nil {
		if _, _, buildErr := profile.PodFitOptions(c.Configuration); buildErr != nil {
			return buildErr
		}
	}
	return err
}

const volcanoExample = "../../../../examples/scheduler/volcano-scheduler.conf"

func TestExampleConfigsLoad(t *testing.T) {
	for _, f := range []string{"volcano-scheduler.conf", "caldera-scheduler.conf"} {
		t.Run(f, func(t *testing.T) {
			if err := loadConfig(t, "--config", filepath.Join("..", "..", "..", "..", "examples", "scheduler", f)); err != nil {
				t.Errorf("loading %s: %v", f, err)
			}
		})
	}
}

func TestMisspelledPluginStopsStartUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "volcano-scheduler.conf")
	conf := "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priorty\n  - name: gang\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	err := loadConfig(t, "--config", path)
	if err == nil {
		t.Fatal("a configuration with an unknown plugin was accepted")
	}
	for _, want := range []string{"tiers[0].plugins[0].name", "priorty", `"priority"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestDefaultsWithoutAFile(t *testing.T) {
	if err := loadConfig(t); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

// TestLeaderElectionNamespace: the flag moves the Lease, whatever the
// file's format says.
func TestLeaderElectionNamespace(t *testing.T) {
	c, err := configure(t, "--config", volcanoExample, "--leader-election-namespace", "caldera-system")
	if err != nil {
		t.Fatal(err)
	}
	if c.Configuration.LeaderElection.ResourceNamespace != "caldera-system" {
		t.Errorf("lease namespace %q", c.Configuration.LeaderElection.ResourceNamespace)
	}
}

// TestFlagsOverride: the flags that are given replace the file's values;
// the others leave them.
func TestFlagsOverride(t *testing.T) {
	type overridden struct {
		SchedulerNames     []string
		LeaderElect        bool
		Kubeconfig         string
		HealthzBindAddress string
		MetricsBindAddress string
		Master             string
		Sharding           configv1alpha1.ShardingConfiguration
	}
	const example = "../../../../examples/scheduler/caldera-scheduler.conf"
	for name, tc := range map[string]struct {
		args []string
		want overridden
	}{
		"the file's": {
			args: []string{"--config", example},
			want: overridden{SchedulerNames: []string{"volcano"}, LeaderElect: true, HealthzBindAddress: ":11251", MetricsBindAddress: ":8080", Sharding: configv1alpha1.ShardingConfiguration{Mode: "none"}},
		},
		"leader election off": {
			args: []string{"--config", example, "--leader-elect=false"},
			want: overridden{SchedulerNames: []string{"volcano"}, HealthzBindAddress: ":11251", MetricsBindAddress: ":8080", Sharding: configv1alpha1.ShardingConfiguration{Mode: "none"}},
		},
		"every flag": {
			args: []string{"--config", example, "--scheduler-name=a,b", "--leader-elect=false", "--kubeconfig=/k",
				"--healthz-bind-address=:1", "--metrics-bind-address=0", "--master=https://api:6443",
				"--scheduler-sharding-mode=hard", "--scheduler-sharding-name=batch"},
			want: overridden{SchedulerNames: []string{"a", "b"}, Kubeconfig: "/k", HealthzBindAddress: ":1", MetricsBindAddress: "0", Master: "https://api:6443",
				Sharding: configv1alpha1.ShardingConfiguration{Mode: "hard", ShardName: "batch"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := configure(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			cfg := c.Configuration
			got := overridden{
				SchedulerNames:     cfg.SchedulerNames,
				LeaderElect:        cfg.LeaderElection.LeaderElect != nil && *cfg.LeaderElection.LeaderElect,
				Kubeconfig:         cfg.ClientConnection.Kubeconfig,
				HealthzBindAddress: cfg.HealthzBindAddress,
				MetricsBindAddress: cfg.MetricsBindAddress,
				Master:             c.Master,
				Sharding:           cfg.Sharding,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("configuration (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestValidateNamesFlags: a flag's value is checked by the rules of the
// configuration field it sets, and the error names the flag.
func TestValidateNamesFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"valid flags": {
			args: []string{"--scheduler-name=volcano,caldera", "--leader-election-namespace=caldera-system", "--healthz-bind-address=127.0.0.1:11251", "--metrics-bind-address=0"},
		},
		"a scheduler name that is no name": {
			args: []string{"--scheduler-name=Volcano_1"},
			want: []string{`--scheduler-name: Invalid value: "Volcano_1": a lowercase RFC 1123 subdomain`},
		},
		"a scheduler name twice": {
			args: []string{"--scheduler-name=volcano,volcano"},
			want: []string{`--scheduler-name: Duplicate value: "volcano"`},
		},
		"a sharding mode that is none of the modes": {
			args: []string{"--scheduler-sharding-mode=strict"},
			want: []string{`--scheduler-sharding-mode: Unsupported value: "strict": supported values: "none", "soft", "hard"`},
		},
		"a lease namespace that is no namespace": {
			args: []string{"--leader-election-namespace=Caldera"},
			want: []string{`--leader-election-namespace: Invalid value: "Caldera": a lowercase RFC 1123 label`},
		},
		"one address for probes and secure metrics": {
			args: []string{"--healthz-bind-address=:8080", "--metrics-bind-address=:8080"},
			want: []string{`--metrics-secure: Invalid value: true: metricsBindAddress equals healthzBindAddress (:8080): probes need plain HTTP`},
		},
		"one address for probes and plain metrics": {
			args: []string{"--healthz-bind-address=:8080", "--metrics-bind-address=:8080", "--metrics-secure=false"},
		},
		"a certificate directory for plain metrics": {
			args: []string{"--metrics-secure=false", "--metrics-cert-dir=/certs"},
			want: []string{`--metrics-cert-dir: Invalid value: "/certs": needs --metrics-secure`},
		},
		"bind addresses without a port": {
			args: []string{"--healthz-bind-address=localhost", "--metrics-bind-address=:http"},
			want: []string{
				`--healthz-bind-address: Invalid value: "localhost": must be "host:port", ":port" or "0" to disable`,
				`--metrics-bind-address: Invalid value: ":http": port must be a number from 0 to 65535`,
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions(profile.NameRegistry())
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			errs := o.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", errs, len(tc.want))
			}
			for i, err := range errs {
				if !strings.HasPrefix(err.Error(), tc.want[i]) {
					t.Errorf("error %q, want one beginning %q", err, tc.want[i])
				}
			}
		})
	}
}

// TestConfigNeedsComplete: without Complete there is no configuration.
func TestConfigNeedsComplete(t *testing.T) {
	o := NewOptions(profile.NameRegistry())
	if _, err := o.Config(); err == nil {
		t.Error("Config without Complete")
	}
	if errs := o.Validate(); len(errs) == 0 {
		t.Error("Validate without Complete")
	}
}
