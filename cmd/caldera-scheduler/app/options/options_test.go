package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
)

func loadConfig(t *testing.T, args ...string) error {
	t.Helper()
	o := &Options{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := o.Config(fs, profile.NameRegistry())
	if err == nil {
		if _, _, buildErr := profile.PodFitOptions(cfg); buildErr != nil {
			return buildErr
		}
	}
	return err
}

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
	o := &Options{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--config", "../../../../examples/scheduler/volcano-scheduler.conf", "--leader-election-namespace", "caldera-system"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := o.Config(fs, profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LeaderElection.ResourceNamespace != "caldera-system" {
		t.Errorf("lease namespace %q", cfg.LeaderElection.ResourceNamespace)
	}
}
