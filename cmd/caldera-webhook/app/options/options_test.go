package options

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

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

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		args           []string
		wantErrs       []string
		wantSelfSigned bool
	}{
		"defaults sign their own certificates": {
			wantSelfSigned: true,
		},
		"local process": {
			args:           []string{"--url-base=https://127.0.0.1:9443", "--extra-sans=127.0.0.1", "--cert-dir=/tmp/x"},
			wantSelfSigned: true,
		},
		"supplied certificates turn self-signing off": {
			args: []string{"--tls-cert-file=/c/tls.crt", "--tls-private-key-file=/c/tls.key"},
		},
		"supplied certificate without key": {
			args:     []string{"--tls-cert-file=/c/tls.crt", "--self-signed=false"},
			wantErrs: []string{"--tls-private-key-file: Required value: --tls-cert-file and --tls-private-key-file are both needed without --self-signed"},
		},
		"self-signed and supplied": {
			args:           []string{"--tls-cert-file=/c/tls.crt", "--tls-private-key-file=/c/tls.key", "--self-signed"},
			wantErrs:       []string{"--self-signed: Forbidden: cannot be used with --tls-cert-file and --tls-private-key-file"},
			wantSelfSigned: true,
		},
		"plain http URL": {
			args:           []string{"--url-base=http://127.0.0.1:9443"},
			wantErrs:       []string{`--url-base: Invalid value: "http://127.0.0.1:9443": must be https://host[:port][/path]`},
			wantSelfSigned: true,
		},
		"bad SAN": {
			args:           []string{"--extra-sans=not a host"},
			wantErrs:       []string{`--extra-sans: Invalid value: "not a host": is neither an IP address nor a DNS name`},
			wantSelfSigned: true,
		},
		"neither certificates nor self-signing": {
			args: []string{"--self-signed=false"},
			wantErrs: []string{
				"--tls-cert-file: Required value: --tls-cert-file and --tls-private-key-file are both needed without --self-signed",
				"--tls-private-key-file: Required value: --tls-cert-file and --tls-private-key-file are both needed without --self-signed",
			},
		},
		"self-signed without a directory": {
			args:           []string{"--cert-dir="},
			wantErrs:       []string{"--cert-dir: Required value: --self-signed keeps its certificates there"},
			wantSelfSigned: true,
		},
		"CA bundle with self-signing": {
			args:           []string{"--ca-file=/c/ca.crt"},
			wantErrs:       []string{"--ca-file: Forbidden: only with --tls-cert-file; --self-signed writes its own bundle"},
			wantSelfSigned: true,
		},
		"supplied certificates with a CA bundle": {
			args: []string{"--tls-cert-file=/c/tls.crt", "--tls-private-key-file=/c/tls.key", "--ca-file=/c/ca.crt"},
		},
		"no scheduler name": {
			args:           []string{"--scheduler-name="},
			wantErrs:       []string{"--scheduler-name: Required value: at least one"},
			wantSelfSigned: true,
		},
		"bad names": {
			args: []string{"--service-name=Webhook", "--webhook-config-name=a_b"},
			wantErrs: []string{
				`--service-name: Invalid value: "Webhook": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`--webhook-config-name: Invalid value: "a_b": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			},
			wantSelfSigned: true,
		},
		"bad port": {
			args:           []string{"--port=0"},
			wantErrs:       []string{"--port: Invalid value: 0: must be a port, from 1 to 65535"},
			wantSelfSigned: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, errs := parse(t, tc.args...)
			if diff := cmp.Diff(tc.wantErrs, errs); diff != "" {
				t.Errorf("Validate error (-want,+got):\n%s", diff)
			}
			if o.SelfSigned != tc.wantSelfSigned {
				t.Errorf("SelfSigned = %v, want %v", o.SelfSigned, tc.wantSelfSigned)
			}
		})
	}
}

func TestHosts(t *testing.T) {
	o, errs := parse(t, "--service-name=wh", "--service-namespace=sys", "--url-base=https://127.0.0.1:9443", "--extra-sans=127.0.0.1,wh.example.com")
	if errs != nil {
		t.Fatal(errs)
	}
	want := []string{"wh", "wh.sys", "wh.sys.svc", "wh.sys.svc.cluster.local", "127.0.0.1", "wh.example.com"}
	if diff := cmp.Diff(want, o.Hosts()); diff != "" {
		t.Errorf("Hosts (-want,+got):\n%s", diff)
	}
}

// TestCompleteInCode: options set in code, without flags, are completed
// as if no flag were given.
func TestCompleteInCode(t *testing.T) {
	o := NewOptions()
	o.TLSCertFile, o.TLSPrivateKeyFile = "/c/tls.crt", "/c/tls.key"
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if o.SelfSigned {
		t.Error("self-signed with supplied certificates")
	}
}

func TestConfig(t *testing.T) {
	o, errs := parse(t, "--kubeconfig=/k", "--scheduler-name=a,b", "--health-probe-bind-address=0", "--metrics-bind-address=:9090", "--port=9443")
	if errs != nil {
		t.Fatal(errs)
	}
	c, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.Kubeconfig, c.SchedulerNames, c.HealthProbeBindAddress, c.MetricsBindAddress, c.Serving.Port, c.Serving.SelfSigned}
	want := []any{"/k", []string{"a", "b"}, "0", ":9090", 9443, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Config (-want,+got):\n%s", diff)
	}
}
