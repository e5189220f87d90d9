package certs_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caldera-sh/caldera/pkg/webhooks/certs"
)

const day = 24 * time.Hour

var hosts = []string{"caldera-webhook.caldera-system.svc", "127.0.0.1"}

func options(dir string) certs.Options {
	return certs.Options{Dir: dir, Hosts: hosts, CAValidity: 30 * day, CertValidity: 3 * day}
}

func parse(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return out
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

func serving(t *testing.T, s *certs.SelfSigned) *x509.Certificate {
	t.Helper()
	c, err := s.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Leaf
}

// verify checks that the serving certificate is trusted through the bundle
// for every host, now.
func verify(t *testing.T, s *certs.SelfSigned) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CABundle()) {
		t.Fatal("the CA bundle holds no certificate")
	}
	for _, h := range hosts {
		if _, err := serving(t, s).Verify(x509.VerifyOptions{DNSName: h, Roots: pool, CurrentTime: time.Now()}); err != nil {
			t.Errorf("serving certificate for %s: %v", h, err)
		}
	}
}

func TestNewIssuesAndKeeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		s, err := certs.New(options(dir))
		if err != nil {
			t.Fatal(err)
		}
		verify(t, s)
		for _, f := range []string{certs.CABundleFile, certs.CAKeyFile, certs.CertFile, certs.KeyFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s not written: %v", f, err)
			}
		}

		time.Sleep(day)
		again, err := certs.New(options(dir))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(s.CABundle()), string(again.CABundle())); diff != "" {
			t.Errorf("a restart changed the CA bundle (-before,+after):\n%s", diff)
		}
		if serving(t, s).SerialNumber.Cmp(serving(t, again).SerialNumber) != 0 {
			t.Error("a restart reissued a serving certificate that was not due")
		}

		o := options(dir)
		o.Hosts = append(o.Hosts, "caldera-webhook.other.svc")
		moved, err := certs.New(o)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(s.CABundle()), string(moved.CABundle())); diff != "" {
			t.Errorf("a new host changed the CA bundle (-before,+after):\n%s", diff)
		}
		if err := serving(t, moved).VerifyHostname("caldera-webhook.other.svc"); err != nil {
			t.Errorf("the serving certificate was not reissued for a new host: %v", err)
		}
	})
}

func TestNewReplacesWhatItCannotUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		first, err := certs.New(options(dir))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, certs.CAKeyFile), []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := certs.New(options(dir))
		if err != nil {
			t.Fatal(err)
		}
		if string(s.CABundle()) == string(first.CABundle()) {
			t.Error("a CA whose key is unreadable was kept")
		}
		verify(t, s)
	})
}

func TestRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := certs.New(options(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		firstCA := parse(t, s.CABundle())[0]
		firstLeaf := serving(t, s)

		// Before two thirds of the serving certificate's life nothing is due.
		time.Sleep(day)
		if renewed, err := s.RenewServing(); err != nil || renewed {
			t.Fatalf("RenewServing after 1 day = %v, %v; want false", renewed, err)
		}
		time.Sleep(day + time.Hour)
		if renewed, err := s.RenewServing(); err != nil || !renewed {
			t.Fatalf("RenewServing after 2 days = %v, %v; want true", renewed, err)
		}
		if serving(t, s).SerialNumber.Cmp(firstLeaf.SerialNumber) == 0 {
			t.Error("the serving certificate was not replaced")
		}
		verify(t, s)

		// Two thirds into the CA's life a new CA joins the bundle; the
		// serving certificate is reissued only on request, after the
		// bundle is published.
		time.Sleep(17 * day)
		if renewed, err := s.RenewServing(); err != nil || !renewed {
			t.Fatalf("RenewServing after 19 days = %v, %v; want true", renewed, err)
		}
		time.Sleep(day)
		if changed, err := s.RenewCA(); err != nil || !changed {
			t.Fatalf("RenewCA after 20 days = %v, %v; want true", changed, err)
		}
		bundle := parse(t, s.CABundle())
		if len(bundle) != 2 || !bundle[1].Equal(firstCA) {
			t.Fatalf("bundle after CA renewal has %d CAs, want the new and the old one", len(bundle))
		}
		verify(t, s) // still the old CA's certificate, still trusted
		if renewed, err := s.RenewServing(); err != nil || !renewed {
			t.Fatalf("RenewServing after CA renewal = %v, %v; want true", renewed, err)
		}
		if err := serving(t, s).CheckSignatureFrom(bundle[0]); err != nil {
			t.Errorf("the serving certificate is not from the new CA: %v", err)
		}
		verify(t, s)

		// Once the old CA expires it leaves the bundle.
		time.Sleep(11 * day)
		if changed, err := s.RenewCA(); err != nil || !changed {
			t.Fatalf("RenewCA after the old CA expired = %v, %v; want true", changed, err)
		}
		if n := len(parse(t, s.CABundle())); n != 1 {
			t.Errorf("bundle holds %d CAs after the old one expired, want 1", n)
		}
	})
}

func TestRunPublishesBeforeServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := certs.New(options(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		firstCA := parse(t, s.CABundle())[0]
		var mu sync.Mutex
		var published [][]*x509.Certificate
		failures := 1
		publish := func(_ context.Context, bundle []byte) error {
			mu.Lock()
			defer mu.Unlock()
			if failures > 0 {
				failures--
				return errors.New("API server unavailable")
			}
			// The new CA is published while the old CA's certificate
			// is still served.
			if err := serving(t, s).CheckSignatureFrom(firstCA); err != nil {
				t.Errorf("a certificate of the new CA was served before the bundle was published: %v", err)
			}
			published = append(published, parse(t, bundle))
			return nil
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- s.Run(ctx, publish) }()

		time.Sleep(25 * day)
		synctest.Wait()
		mu.Lock()
		if len(published) != 1 || len(published[0]) != 2 {
			t.Errorf("published %d bundles, want one with two CAs", len(published))
		}
		mu.Unlock()
		if err := serving(t, s).CheckSignatureFrom(parse(t, s.CABundle())[0]); err != nil {
			t.Errorf("after publishing, the serving certificate is not from the new CA: %v", err)
		}
		verify(t, s)

		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func TestRotateServesTheNewCAOnceTheBundlePropagated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := options(t.TempDir())
		o.Propagation = 10 * time.Second
		s, err := certs.New(o)
		if err != nil {
			t.Fatal(err)
		}
		firstCA := parse(t, s.CABundle())[0]
		var mu sync.Mutex
		var published [][]*x509.Certificate
		publish := func(_ context.Context, bundle []byte) error {
			mu.Lock()
			defer mu.Unlock()
			published = append(published, parse(t, bundle))
			return nil
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- s.Run(ctx, publish) }()
		synctest.Wait()

		s.Rotate()
		synctest.Wait()
		mu.Lock()
		if len(published) != 1 || len(published[0]) != 2 || !published[0][1].Equal(firstCA) {
			t.Fatalf("published %d bundles, want one with the new CA and the old", len(published))
		}
		newCA := published[0][0]
		mu.Unlock()
		if err := serving(t, s).CheckSignatureFrom(firstCA); err != nil {
			t.Errorf("the new CA's certificate is served before the bundle propagated: %v", err)
		}

		time.Sleep(o.Propagation)
		synctest.Wait()
		if err := serving(t, s).CheckSignatureFrom(newCA); err != nil {
			t.Errorf("after the propagation delay the serving certificate is not the new CA's: %v", err)
		}
		verify(t, s)

		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
