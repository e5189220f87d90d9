package metricsserving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/caldera-sh/caldera/test/poll"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	writePair(t, dir, "one")
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		addr string
		o    Options
		want string // a substring of the errors, "" for none
	}{
		{"off", "0", Options{Secure: true, CertDir: "/nowhere"}, ""},
		{"self-signed", ":8080", Options{Secure: true}, ""},
		{"certificate directory", "127.0.0.1:8080", Options{Secure: true, CertDir: dir}, ""},
		{"plain", ":8080", Options{}, ""},
		{"bad address", "8080", Options{Secure: true}, "--metrics-bind-address: Invalid value: \"8080\": must be host:port"},
		{"directory without the files", ":8080", Options{Secure: true, CertDir: empty}, "--metrics-cert-dir: Invalid value: \"" + empty + "\": must hold tls.crt"},
		{"certificate for plain HTTP", ":8080", Options{CertDir: dir}, "--metrics-cert-dir: Invalid value: \"" + dir + "\": needs --metrics-secure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.o.Validate(tc.addr)
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("errors %v, want none", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
}

func TestManagerOptions(t *testing.T) {
	m := Options{Secure: true, CertDir: "/certs"}.Manager(":8081")
	if !m.SecureServing || m.CertDir != "/certs" || m.FilterProvider == nil || m.BindAddress != ":8081" || len(m.TLSOpts) != 1 {
		t.Errorf("secure: %+v", m)
	}
	if m := (Options{Secure: true}).Manager(":8081"); m.CertDir == "" {
		t.Error("secure without a directory: controller-runtime would look in its shared temporary one")
	}
	if m := (Options{}).Manager(":8081"); m.SecureServing || m.FilterProvider != nil {
		t.Errorf("plain: %+v", m)
	}
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello")) })

func TestServePlain(t *testing.T) {
	s, err := Serve(t.Context(), "127.0.0.1:0", Options{}, &rest.Config{}, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %s", s.URL())
	}
	if code, body := get(t, http.DefaultClient, s.URL()+"/metrics", ""); code != 200 || body != "hello" {
		t.Fatalf("got %d %q", code, body)
	}
}

// TestServeSecure: HTTPS only, no answer without a token (refused before
// the API server is asked: the configuration points nowhere), and the
// certificate in the directory, followed when it is replaced.
func TestServeSecure(t *testing.T) {
	dir := t.TempDir()
	writePair(t, dir, "first")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := Serve(ctx, "127.0.0.1:0", Options{Secure: true, CertDir: dir}, &rest.Config{Host: "https://127.0.0.1:1"}, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL %s", s.URL())
	}
	plain := "http" + strings.TrimPrefix(s.URL(), "https")
	if code, _ := get(t, http.DefaultClient, plain+"/metrics", ""); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS endpoint: %d, want 400", code)
	}
	if code, body := get(t, insecureClient(), s.URL()+"/metrics", ""); code != http.StatusUnauthorized || strings.Contains(body, "hello") {
		t.Errorf("without a token: %d %q, want 401", code, body)
	}
	if got := servedCN(t, s.Addr()); !strings.HasPrefix(got, "first@") {
		t.Fatalf("served %q, want the directory's certificate", got)
	}
	writePair(t, dir, "second")
	poll.Eventually(t, ctx, 30*time.Second, "the replaced certificate served", func() (bool, string) {
		got := servedCN(t, s.Addr())
		return strings.HasPrefix(got, "second@"), "serving " + got
	})
}

func TestServeSelfSigned(t *testing.T) {
	s, err := Serve(t.Context(), "127.0.0.1:0", Options{Secure: true}, &rest.Config{Host: "https://127.0.0.1:1"}, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	conn, err := tls.Dial("tcp", s.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st := conn.ConnectionState()
	if st.Version < tls.VersionTLS12 || st.NegotiatedProtocol == "h2" {
		t.Errorf("TLS %x, protocol %q", st.Version, st.NegotiatedProtocol)
	}
	if cn := st.PeerCertificates[0].Subject.CommonName; !strings.HasPrefix(cn, "localhost") {
		t.Errorf("self-signed certificate for %q", cn)
	}
}

func TestServeBusyAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Serve(t.Context(), l.Addr().String(), Options{}, &rest.Config{}, hello); err == nil || !strings.Contains(err.Error(), "listening on") {
		t.Fatalf("error %v", err)
	}
}

func get(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func insecureClient() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

// servedCN is the common name of the certificate a new connection gets.
func servedCN(t *testing.T, addr net.Addr) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr.String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// writePair writes a self-signed certificate for cn and its key into dir,
// the key first and each file whole (renamed into place).
func writePair(t *testing.T, dir, cn string) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(cn, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first block is the certificate itself (a CA follows).
	block, _ := pem.Decode(certPEM)
	if c, err := x509.ParseCertificate(block.Bytes); err != nil || !strings.HasPrefix(c.Subject.CommonName, cn) {
		t.Fatalf("generated %v, %v", c, err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyFile, keyPEM}, {CertFile, certPEM}} {
		tmp := filepath.Join(dir, "."+f.name)
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.name)); err != nil {
			t.Fatal(err)
		}
	}
}
