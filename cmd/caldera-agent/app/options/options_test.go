package options

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/caldera-sh/caldera/pkg/agent"
	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
)

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(o *Options)
		errs []string
	}{
		"defaults with a node": {edit: func(o *Options) {}},
		"no node":              {edit: func(o *Options) { o.NodeName = "" }, errs: []string{"--node-name: Required value: give it or set $NODE_NAME"}},
		"no namespace":         {edit: func(o *Options) { o.Namespace = "" }, errs: []string{"--namespace: Required value"}},
		"unknown cgroup driver": {edit: func(o *Options) { o.CgroupDriver = "cgroupv1" },
			errs: []string{`--cgroup-driver: Invalid value: "cgroupv1": must be systemd or cgroupfs`}},
		"zero interval":   {edit: func(o *Options) { o.Interval = 0 }, errs: []string{`--interval: Invalid value: "0s": must be positive`}},
		"negative resync": {edit: func(o *Options) { o.Resync = -time.Second }, errs: []string{`--resync: Invalid value: "-1s": must not be negative`}},
		"every error": {
			edit: func(o *Options) { o.NodeName, o.Interval, o.Resync = "", 0, -time.Second },
			errs: []string{
				"--node-name: Required value: give it or set $NODE_NAME",
				`--interval: Invalid value: "0s": must be positive`,
				`--resync: Invalid value: "-1s": must not be negative`,
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			o.NodeName = "n"
			tc.edit(o)
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

// TestComplete: the node and the namespace come from the pod's
// environment unless their flags are given.
func TestComplete(t *testing.T) {
	for name, tc := range map[string]struct {
		args          []string
		env           map[string]string
		wantNode      string
		wantNamespace string
	}{
		"no flags, no environment": {wantNamespace: "caldera-system"},
		"environment": {
			env:      map[string]string{"NODE_NAME": "node-1", "POD_NAMESPACE": "colocation"},
			wantNode: "node-1", wantNamespace: "colocation",
		},
		"flags win": {
			args:     []string{"--node-name=node-2", "--namespace=other"},
			env:      map[string]string{"NODE_NAME": "node-1", "POD_NAMESPACE": "colocation"},
			wantNode: "node-2", wantNamespace: "other",
		},
		"the default namespace given as a flag wins": {
			args:     []string{"--namespace=caldera-system"},
			env:      map[string]string{"NODE_NAME": "node-1", "POD_NAMESPACE": "colocation"},
			wantNode: "node-1", wantNamespace: "caldera-system",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("NODE_NAME", tc.env["NODE_NAME"])
			t.Setenv("POD_NAMESPACE", tc.env["POD_NAMESPACE"])
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.wantNode, tc.wantNamespace}, []string{o.NodeName, o.Namespace}); diff != "" {
				t.Errorf("node and namespace (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCompleteInCode: a namespace set in code is kept, as a flag is.
func TestCompleteInCode(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "colocation")
	o := NewOptions()
	o.Namespace = "mine"
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "mine" {
		t.Errorf("namespace %q, want mine", o.Namespace)
	}
}

func TestConfig(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--node-name=n", "--cgroup-driver=cgroupfs", "--kubelet-cgroup-root=/kubepods", "--kubeconfig=/k", "--metrics-bind-address=0", "--metrics-secure=false", "--health-probe-bind-address=:9"}); err != nil {
		t.Fatal(err)
	}
	got, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Kubeconfig:             "/k",
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: ":9",
		Agent: agent.Options{
			NodeName:  "n",
			Namespace: "caldera-system",
			Layout:    cgroup.Layout{Root: "/sys/fs/cgroup", Driver: cgroup.Cgroupfs, KubeletRoot: "/kubepods"},
			MemInfo:   "/proc/meminfo",
			Interval:  10 * time.Second,
			Resync:    time.Minute,
		},
		Usage: &UsageReporting{Interval: time.Minute, Window: 5 * time.Minute},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Config (-want,+got):\n%s", diff)
	}
}

func TestUsageReportingFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    *UsageReporting
		wantErr string
	}{
		{args: []string{"--usage-report-interval=0"}},
		{args: []string{"--usage-report-interval=30s", "--usage-window=2m"}, want: &UsageReporting{Interval: 30 * time.Second, Window: 2 * time.Minute}},
		{args: []string{"--usage-report-interval=-1s"}, wantErr: "--usage-report-interval: Invalid value: \"-1s\": must not be negative (0 turns the report off)"},
		{args: []string{"--usage-window=5s"}, wantErr: "--usage-window: Invalid value: \"5s\": must be at least --interval (10s): the window averages readings"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(append([]string{"--node-name=n"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			if errs := o.Validate(); tc.wantErr != "" || len(errs) > 0 {
				if got := errs.ToAggregate(); got == nil || got.Error() != tc.wantErr {
					t.Fatalf("Validate() = %v, want %q", got, tc.wantErr)
				}
				return
			}
			got, err := o.Config()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Usage); diff != "" {
				t.Errorf("Usage (-want,+got):\n%s", diff)
			}
		})
	}
}
