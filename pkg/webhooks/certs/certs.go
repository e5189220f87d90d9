// Package certs issues and renews the webhook's serving certificate from a
// self-signed CA, for clusters without a certificate manager and for the
// local environment.
//
// The CA lives long (ten years by default) and the serving certificate short
// (one year); each is renewed once two thirds of its validity have passed.
// A renewed CA joins the bundle next to the old one, which stays until it
// expires, and the bundle is published (written into the webhook
// configurations) a propagation delay before any certificate the new CA
// signs is served, so the API server trusts the webhook throughout. Rotate
// does the same on demand. Everything is kept in a
// directory, so a restarted webhook keeps its CA and the configurations stay
// valid.
//
// One CA per directory: several replicas with their own directories would
// overwrite each other's bundle. Run one replica, or supply certificates.
package certs

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// File names in Options.Dir.
const (
	// CABundleFile holds the CA bundle: the current CA first, then older CAs
	// that have not expired.
	CABundleFile = "ca.crt"
	// CAKeyFile holds the current CA's private key.
	CAKeyFile = "ca.key"
	// CertFile holds the serving certificate.
	CertFile = "tls.crt"
	// KeyFile holds the serving certificate's private key.
	KeyFile = "tls.key"
)

// Default validities.
const (
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultCertValidity = 365 * 24 * time.Hour
	DefaultPropagation  = 15 * time.Second
)

// backdate is how far before issuance a certificate becomes valid, so that
// an API server whose clock is a little behind accepts it.
const backdate = 5 * time.Minute

// Options configure a SelfSigned authority.
type Options struct {
	// Dir keeps the CA and the serving certificate. Required.
	Dir string
	// Hosts are the DNS names and IP addresses the serving certificate is
	// for. At least one is required.
	Hosts []string
	// CAValidity and CertValidity default to DefaultCAValidity and
	// DefaultCertValidity.
	CAValidity   time.Duration
	CertValidity time.Duration
	// Propagation is how long after publishing a bundle with a new CA the
	// certificates that CA signs start being served: API servers learn
	// the bundle from their watch of the webhook configurations, a moment
	// later. 0 means DefaultPropagation.
	Propagation time.Duration
	// Clock defaults to the real clock.
	Clock clock.WithTicker
}

// SelfSigned is a self-signed CA and the serving certificate it issued.
type SelfSigned struct {
	o Options

	mu     sync.Mutex
	cas    []*x509.Certificate // current first
	caKey  crypto.Signer
	leaf   *x509.Certificate
	served *tls.Certificate
	// rotate asks for a new CA before it is due; kick wakes Run for it.
	rotate bool
	kick   chan struct{}
}

// New loads the CA and serving certificate from o.Dir, issuing (and
// writing) whatever is missing, unreadable, expired, due for renewal or not
// valid for o.Hosts.
func New(o Options) (*SelfSigned, error) {
	if o.Dir == "" {
		return nil, errors.New("certs: a directory is required")
	}
	if len(o.Hosts) == 0 {
		return nil, errors.New("certs: at least one host is required")
	}
	if o.CAValidity == 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.CertValidity == 0 {
		o.CertValidity = DefaultCertValidity
	}
	if o.Propagation == 0 {
		o.Propagation = DefaultPropagation
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	s := &SelfSigned{o: o, kick: make(chan struct{}, 1)}
	s.load()
	now := o.Clock.Now()
	if len(s.cas) == 0 || due(s.cas[0], now) {
		if err := s.renewCA(now); err != nil {
			return nil, err
		}
	}
	if s.leafDue(now) {
		if err := s.renewLeaf(now); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// load reads what o.Dir holds, keeping only what is usable.
func (s *SelfSigned) load() {
	now := s.o.Clock.Now()
	bundle, err1 := os.ReadFile(filepath.Join(s.o.Dir, CABundleFile))
	keyPEM, err2 := os.ReadFile(filepath.Join(s.o.Dir, CAKeyFile))
	if err1 != nil || err2 != nil {
		return
	}
	cas, err := parseCertificates(bundle)
	if err != nil || len(cas) == 0 {
		return
	}
	key, err := parseKey(keyPEM)
	if err != nil || !cas[0].IsCA || !publicKeysEqual(cas[0].PublicKey, key.Public()) || expired(cas[0], now) {
		return
	}
	s.cas = append(cas[:1], unexpired(cas[1:], now)...)
	s.caKey = key
	served, err := tls.LoadX509KeyPair(filepath.Join(s.o.Dir, CertFile), filepath.Join(s.o.Dir, KeyFile))
	if err != nil || served.Leaf == nil {
		return
	}
	s.leaf, s.served = served.Leaf, &served
}

// GetCertificate returns the serving certificate, for tls.Config.
func (s *SelfSigned) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served, nil
}

// CABundle returns the PEM-encoded CAs the API server must trust.
func (s *SelfSigned) CABundle() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return encodeCertificates(s.cas)
}

// NextRenewal is when Renew next has something to do.
func (s *SelfSigned) NextRenewal() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := dueAt(s.cas[0])
	if t := dueAt(s.leaf); t.Before(next) {
		next = t
	}
	for _, ca := range s.cas[1:] {
		if ca.NotAfter.Before(next) {
			next = ca.NotAfter // drop it from the bundle
		}
	}
	return next
}

// RenewCA renews the CA if it is due, keeping the old one in the bundle, and
// drops expired CAs from the bundle. It reports whether the bundle changed;
// if so, publish it before calling RenewServing.
func (s *SelfSigned) RenewCA() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Clock.Now()
	older := unexpired(s.cas[1:], now)
	pruned := len(older) != len(s.cas)-1
	s.cas = append(s.cas[:1], older...)
	if !due(s.cas[0], now) && !s.rotate {
		if pruned {
			return true, s.writeCA()
		}
		return false, nil
	}
	s.rotate = false
	return true, s.renewCA(now)
}

// Rotate issues a new CA and serving certificate now rather than when they
// are due, in Run, the same way as a renewal: the old CA stays in the
// bundle until it expires, and the new certificate is served once the
// bundle had time to propagate.
func (s *SelfSigned) Rotate() {
	s.mu.Lock()
	s.rotate = true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// RenewServing issues a new serving certificate if the current one is due or
// was signed by an older CA.
func (s *SelfSigned) RenewServing() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Clock.Now()
	if !s.leafDue(now) {
		return false, nil
	}
	return true, s.renewLeaf(now)
}

// Run renews the CA and the serving certificate when they are due until ctx
// ends, calling publish with the new bundle whenever it changes; a failed
// publish is retried before the new CA signs anything.
func (s *SelfSigned) Run(ctx context.Context, publish func(context.Context, []byte) error) error {
	logger := klog.FromContext(ctx)
	for {
		changed, err := s.RenewCA()
		if err != nil {
			return err
		}
		if changed {
			logger.Info("Renewed the webhook CA bundle", "caCount", len(s.cas))
			if err := s.publish(ctx, publish); err != nil {
				return err
			}
			if s.servedByOlderCA() && !s.sleep(ctx, s.o.Propagation) {
				return nil
			}
		}
		renewed, err := s.RenewServing()
		if err != nil {
			return err
		}
		if renewed {
			logger.Info("Renewed the webhook serving certificate", "notAfter", s.leaf.NotAfter)
		}
		timer := s.o.Clock.NewTimer(s.NextRenewal().Sub(s.o.Clock.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-s.kick:
			timer.Stop()
		case <-timer.C():
		}
	}
}

// servedByOlderCA reports whether the served certificate is not the
// current CA's.
func (s *SelfSigned) servedByOlderCA() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf.CheckSignatureFrom(s.cas[0]) != nil
}

// sleep waits d on the clock; false if ctx ended first.
func (s *SelfSigned) sleep(ctx context.Context, d time.Duration) bool {
	timer := s.o.Clock.NewTimer(d)
	select {
	case <-ctx.Done():
		timer.Stop()
		return false
	case <-timer.C():
		return true
	}
}

func (s *SelfSigned) publish(ctx context.Context, publish func(context.Context, []byte) error) error {
	delay := time.Second
	for {
		err := publish(ctx, s.CABundle())
		if err == nil {
			return nil
		}
		klog.FromContext(ctx).Error(err, "Publishing the webhook CA bundle failed; retrying", "after", delay)
		timer := s.o.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C():
		}
		delay = min(2*delay, time.Minute)
	}
}

// leafDue reports whether the serving certificate must be (re)issued.
func (s *SelfSigned) leafDue(now time.Time) bool {
	if s.leaf == nil || due(s.leaf, now) || s.leaf.CheckSignatureFrom(s.cas[0]) != nil {
		return true
	}
	for _, h := range s.o.Hosts {
		if s.leaf.VerifyHostname(h) != nil {
			return true
		}
	}
	return false
}

func (s *SelfSigned) renewCA(now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("certs: generating the CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("caldera-webhook-ca@%d", now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(s.o.CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	ca, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return err
	}
	s.cas = append([]*x509.Certificate{ca}, unexpired(s.cas, now)...)
	s.caKey = key
	return s.writeCA()
}

func (s *SelfSigned) renewLeaf(now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("certs: generating the serving key: %w", err)
	}
	ca := s.cas[0]
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: s.o.Hosts[0]},
		NotBefore:   now.Add(-backdate),
		NotAfter:    minTime(now.Add(s.o.CertValidity), ca.NotAfter),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range s.o.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	leaf, err := sign(tmpl, ca, key.Public(), s.caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	certPEM := encodeCertificates([]*x509.Certificate{leaf})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	served, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := writeFile(filepath.Join(s.o.Dir, KeyFile), keyPEM); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(s.o.Dir, CertFile), certPEM); err != nil {
		return err
	}
	s.leaf, s.served = leaf, &served
	return nil
}

func (s *SelfSigned) writeCA() error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(s.caKey)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := writeFile(filepath.Join(s.o.Dir, CAKeyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})); err != nil {
		return err
	}
	return writeFile(filepath.Join(s.o.Dir, CABundleFile), encodeCertificates(s.cas))
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("certs: signing %s: %w", tmpl.Subject.CommonName, err)
	}
	return x509.ParseCertificate(der)
}

// dueAt is when two thirds of a certificate's validity have passed.
func dueAt(c *x509.Certificate) time.Time {
	return c.NotAfter.Add(-c.NotAfter.Sub(c.NotBefore) / 3)
}

func expired(c *x509.Certificate, now time.Time) bool {
	return !now.Before(c.NotAfter)
}

// unexpired returns the certificates of cs that have not expired, in a new
// slice.
func unexpired(cs []*x509.Certificate, now time.Time) []*x509.Certificate {
	var out []*x509.Certificate
	for _, c := range cs {
		if !expired(c, now) {
			out = append(out, c)
		}
	}
	return out
}

func due(c *x509.Certificate, now time.Time) bool {
	return !now.Before(dueAt(c))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// writeFile replaces a file atomically, so a crash never leaves half a key.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return nil
}

func encodeCertificates(certs []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return certs, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
}

func parseKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("not a signing key")
	}
	return signer, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	ka, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && ka.Equal(b)
}
