package options

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.Complete(fs)
	return o, o.Validate()
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		args           []string
		wantErr        string
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
			args:    []string{"--tls-cert-file=/c/tls.crt", "--self-signed=false"},
			wantErr: "--tls-cert-file and --tls-private-key-file: both are required without --self-signed",
		},
		"self-signed and supplied": {
			args:           []string{"--tls-cert-file=/c/tls.crt", "--tls-private-key-file=/c/tls.key", "--self-signed"},
			wantErr:        "--self-signed: cannot be used with --tls-cert-file and --tls-private-key-file",
			wantSelfSigned: true,
		},
		"plain http URL": {
			args:           []string{"--url-base=http://127.0.0.1:9443"},
			wantErr:        `--url-base: "http://127.0.0.1:9443" must be https://host[:port][/path]`,
			wantSelfSigned: true,
		},
		"bad SAN": {
			args:           []string{"--extra-sans=not a host"},
			wantErr:        `--extra-sans: "not a host" is neither an IP address nor a DNS name`,
			wantSelfSigned: true,
		},
		"bad port": {
			args:           []string{"--port=0"},
			wantErr:        "--port: 0 is not a port",
			wantSelfSigned: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parse(t, tc.args...)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("Validate error (-want,+got):\n%s", diff)
			}
			if o.SelfSigned != tc.wantSelfSigned {
				t.Errorf("SelfSigned = %v, want %v", o.SelfSigned, tc.wantSelfSigned)
			}
		})
	}
}

func TestHosts(t *testing.T) {
	o, err := parse(t, "--service-name=wh", "--service-namespace=sys", "--url-base=https://127.0.0.1:9443", "--extra-sans=127.0.0.1,wh.example.com")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"wh", "wh.sys", "wh.sys.svc", "wh.sys.svc.cluster.local", "127.0.0.1", "wh.example.com"}
	if diff := cmp.Diff(want, o.Hosts()); diff != "" {
		t.Errorf("Hosts (-want,+got):\n%s", diff)
	}
}
