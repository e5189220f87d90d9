// Package metricsserving serves a component's metrics and diagnostics the same
// way in every Caldera binary: over HTTPS, to callers the API server
// vouches for. A caller sends a bearer token; the component asks the API
// server who it is (a TokenReview) and whether it may get the path it
// asked for (a SubjectAccessReview on a non-resource URL), and answers 401
// or 403 otherwise. The serving certificate is read from a directory and
// re-read when it changes, or made self-signed at start-up when no
// directory is given, as kube-controller-manager does for its metrics.
//
// Binaries built on controller-runtime take the same options through
// Manager; the others serve their own handler with Serve.
package metricsserving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The files Options.CertDir holds.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Options say how the metrics endpoint is served; every binary has the
// same two flags for them.
type Options struct {
	// Secure serves HTTPS to authenticated, authorized callers. Off, the
	// endpoint is plain HTTP, open to anyone who reaches it.
	Secure bool
	// CertDir holds CertFile and KeyFile (PEM), re-read when they change.
	// Empty, a self-signed certificate is made at start-up.
	CertDir string
}

// NewOptions returns the defaults: secure, self-signed.
func NewOptions() Options { return Options{Secure: true} }

// AddFlags registers --metrics-secure and --metrics-cert-dir.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Secure, "metrics-secure", o.Secure,
		"serve /metrics over HTTPS to callers the API server authenticates (bearer token) and authorizes (get on the path, e.g. the ClusterRole caldera-metrics-reader); false serves plain HTTP to anyone")
	fs.StringVar(&o.CertDir, "metrics-cert-dir", o.CertDir,
		"directory holding the metrics endpoint's "+CertFile+" and "+KeyFile+", re-read when they change; empty: a self-signed certificate made at start-up")
}

// Validate checks the options for a metrics endpoint on addr ("0" or ""
// serves none, and then nothing else is checked).
func (o Options) Validate(addr string) field.ErrorList {
	if Off(addr) {
		return nil
	}
	var errs field.ErrorList
	if _, _, err := net.SplitHostPort(addr); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("--metrics-bind-address"), addr, "must be host:port, :port or 0: "+err.Error()))
	}
	return append(errs, o.ValidateCertificate()...)
}

// ValidateCertificate checks the options only, for a component that checks
// its address itself.
func (o Options) ValidateCertificate() field.ErrorList {
	if o.CertDir == "" {
		return nil
	}
	if !o.Secure {
		return field.ErrorList{field.Invalid(field.NewPath("--metrics-cert-dir"), o.CertDir, "needs --metrics-secure: a plain HTTP endpoint uses no certificate")}
	}
	var errs field.ErrorList
	for _, f := range []string{CertFile, KeyFile} {
		if _, err := os.Stat(filepath.Join(o.CertDir, f)); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("--metrics-cert-dir"), o.CertDir, "must hold "+f+": "+err.Error()))
		}
	}
	return errs
}

// Off says whether addr turns the endpoint off.
func Off(addr string) bool { return addr == "" || addr == "0" }

// Manager returns controller-runtime's metrics server options for an
// endpoint on addr served as o says.
func (o Options) Manager(addr string) metricsserver.Options {
	m := metricsserver.Options{BindAddress: addr, SecureServing: o.Secure}
	if o.Secure {
		m.FilterProvider = Filter
		m.TLSOpts = []func(*tls.Config){tlsDefaults}
		// controller-runtime makes a self-signed certificate when the
		// directory lacks the files; an empty directory would make it look
		// in a shared temporary one.
		m.CertDir = o.CertDir
		if m.CertDir == "" {
			m.CertDir = filepath.Join(os.TempDir(), "caldera-no-metrics-certificate")
		}
	}
	return m
}

// tlsDefaults: TLS 1.2 at least, and HTTP/1.1 only (HTTP/2's rapid-reset
// and stream-exhaustion attacks are not worth it for a scrape endpoint).
func tlsDefaults(c *tls.Config) {
	c.MinVersion = tls.VersionTLS12
	c.NextProtos = []string{"http/1.1"}
}

// Server is a running endpoint.
type Server struct {
	addr   net.Addr
	secure bool
	srv    *http.Server
	done   chan struct{}
}

// Addr is where it listens.
func (s *Server) Addr() net.Addr { return s.addr }

// URL is the endpoint's base URL on loopback, for tests and local runs.
func (s *Server) URL() string {
	scheme := "http"
	if s.secure {
		scheme = "https"
	}
	_, port, _ := net.SplitHostPort(s.addr.String())
	return scheme + "://127.0.0.1:" + port
}

// Stop closes it, waiting up to five seconds for answers under way.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}

// Serve serves h on addr as o says until ctx ends or Stop is called;
// config reaches the API server that reviews callers when o.Secure. It
// returns once it listens.
func Serve(ctx context.Context, addr string, o Options, config *rest.Config, h http.Handler) (*Server, error) {
	logger := klog.FromContext(ctx).WithName("http")
	var tlsConfig *tls.Config
	if o.Secure {
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return nil, fmt.Errorf("a client to review metrics callers: %w", err)
		}
		h = NewReviewer(client).Wrap(logger, h)
		if tlsConfig, err = certificate(ctx, o.CertDir); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	s := &Server{
		addr:   l.Addr(),
		secure: o.Secure,
		srv:    &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsConfig},
		done:   make(chan struct{}),
	}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "Serving HTTP failed", "address", s.addr.String())
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-s.done:
		}
	}()
	logger.Info("Serving HTTP", "address", s.addr.String(), "tls", o.Secure)
	return s, nil
}

// certificate is the TLS configuration serving the certificate in dir,
// watched for changes until ctx ends, or a self-signed one when dir is
// empty.
func certificate(ctx context.Context, dir string) (*tls.Config, error) {
	c := &tls.Config{}
	tlsDefaults(c)
	if dir == "" {
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{{127, 0, 0, 1}}, nil)
		if err != nil {
			return nil, fmt.Errorf("a self-signed metrics certificate: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("a self-signed metrics certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
		return c, nil
	}
	w, err := certwatcher.New(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("--metrics-cert-dir %s: %w", dir, err)
	}
	go func() {
		if err := w.Start(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Watching the metrics certificate failed", "dir", dir)
		}
	}()
	c.GetCertificate = w.GetCertificate
	return c, nil
}
