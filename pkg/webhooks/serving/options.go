package serving

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/caldera-sh/caldera/pkg/webhooks/certs"
	"github.com/caldera-sh/caldera/pkg/webhooks/registration"
)

// Options are the flags of a webhook server: where it listens, its
// certificate, and how the API server reaches it.
type Options struct {
	// BindAddress and Port are where the webhooks are served (HTTPS).
	BindAddress string
	Port        int
	// CertDir keeps the self-signed CA and serving certificate.
	CertDir string
	// TLSCertFile and TLSPrivateKeyFile supply the serving certificate; they
	// are reloaded when they change.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// CAFile is the bundle written into the webhook configurations when
	// certificates are supplied.
	CAFile string
	// SelfSigned issues a CA and serving certificate in CertDir. It defaults
	// to true when no certificate is supplied.
	SelfSigned bool
	// ServiceName and ServiceNamespace name the webhook's Service: the
	// configurations' clientConfig (unless URLBase is set) and the
	// certificate's DNS names.
	ServiceName      string
	ServiceNamespace string
	// ExtraSANs are further DNS names or IP addresses of the certificate.
	ExtraSANs []string
	// URLBase, when set, makes the API server call https://<URLBase><path>
	// instead of the Service; for a webhook running as a local process.
	URLBase string
	// WebhookConfigName names the Mutating- and ValidatingWebhookConfiguration.
	WebhookConfigName string
	// Register creates or updates the webhook configurations.
	Register bool

	// flags are those AddFlags registered, for Complete to tell a flag
	// given from its default.
	flags *pflag.FlagSet
}

// NewOptions returns the defaults for a component whose Service and
// configurations are called name.
func NewOptions(name string) Options {
	return Options{
		BindAddress: "0.0.0.0", Port: 8443, CertDir: "/var/run/" + name + "/certs", SelfSigned: true,
		ServiceName: name, ServiceNamespace: "caldera-system", WebhookConfigName: name, Register: true,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "address the webhooks are served on")
	fs.IntVar(&o.Port, "port", o.Port, "HTTPS port the webhooks are served on")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "directory that keeps the self-signed CA and serving certificate")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "serving certificate (PEM); reloaded when it changes. Turns --self-signed off")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "private key of --tls-cert-file (PEM)")
	fs.StringVar(&o.CAFile, "ca-file", o.CAFile, "with --tls-cert-file and --register: CA bundle written into the webhook configurations; empty keeps the bundle they have (e.g. from a CA injector)")
	fs.BoolVar(&o.SelfSigned, "self-signed", o.SelfSigned, "issue a CA and serving certificate in --cert-dir, renew them before they expire and write the CA bundle into the webhook configurations; off when --tls-cert-file is given unless set explicitly")
	fs.StringVar(&o.ServiceName, "service-name", o.ServiceName, "name of the webhook's Service")
	fs.StringVar(&o.ServiceNamespace, "service-namespace", o.ServiceNamespace, "namespace of the webhook's Service; pods in it and in kube-system are not checked")
	fs.StringSliceVar(&o.ExtraSANs, "extra-sans", o.ExtraSANs, "further DNS names or IP addresses of the self-signed serving certificate (e.g. 127.0.0.1)")
	fs.StringVar(&o.URLBase, "url-base", o.URLBase, "base URL the API server calls instead of the Service, e.g. https://127.0.0.1:8443 for a local process; its host is added to the certificate")
	fs.StringVar(&o.WebhookConfigName, "webhook-config-name", o.WebhookConfigName, "name of the Mutating- and ValidatingWebhookConfiguration")
	fs.BoolVar(&o.Register, "register", o.Register, "create or update the webhook configurations at start")
}

// Complete fills in what depends on other flags: --self-signed is off when
// certificates are supplied and was not asked for explicitly.
func (o *Options) Complete() {
	if o.TLSCertFile != "" && (o.flags == nil || !o.flags.Changed("self-signed")) {
		o.SelfSigned = false
	}
}

// Validate checks the options.
func (o *Options) Validate() field.ErrorList {
	var errs field.ErrorList
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, field.Invalid(field.NewPath("--port"), o.Port, "must be a port, from 1 to 65535"))
	}
	suppliedCert := o.TLSCertFile != "" || o.TLSPrivateKeyFile != ""
	switch {
	case o.SelfSigned && suppliedCert:
		errs = append(errs, field.Forbidden(field.NewPath("--self-signed"), "cannot be used with --tls-cert-file and --tls-private-key-file"))
	case !o.SelfSigned && (o.TLSCertFile == "" || o.TLSPrivateKeyFile == ""):
		const both = "--tls-cert-file and --tls-private-key-file are both needed without --self-signed"
		if o.TLSCertFile == "" {
			errs = append(errs, field.Required(field.NewPath("--tls-cert-file"), both))
		}
		if o.TLSPrivateKeyFile == "" {
			errs = append(errs, field.Required(field.NewPath("--tls-private-key-file"), both))
		}
	case o.SelfSigned && o.CertDir == "":
		errs = append(errs, field.Required(field.NewPath("--cert-dir"), "--self-signed keeps its certificates there"))
	}
	if o.CAFile != "" && o.SelfSigned {
		errs = append(errs, field.Forbidden(field.NewPath("--ca-file"), "only with --tls-cert-file; --self-signed writes its own bundle"))
	}
	if o.URLBase != "" {
		u, err := url.Parse(o.URLBase)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, field.Invalid(field.NewPath("--url-base"), o.URLBase, "must be https://host[:port][/path]"))
		}
	}
	if o.URLBase == "" || o.SelfSigned {
		for _, msg := range validation.IsDNS1123Label(o.ServiceName) {
			errs = append(errs, field.Invalid(field.NewPath("--service-name"), o.ServiceName, msg))
		}
		for _, msg := range validation.IsDNS1123Label(o.ServiceNamespace) {
			errs = append(errs, field.Invalid(field.NewPath("--service-namespace"), o.ServiceNamespace, msg))
		}
	}
	for _, san := range o.ExtraSANs {
		if net.ParseIP(san) == nil && len(validation.IsDNS1123Subdomain(strings.TrimPrefix(san, "*."))) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("--extra-sans"), san, "is neither an IP address nor a DNS name"))
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(o.WebhookConfigName) {
		errs = append(errs, field.Invalid(field.NewPath("--webhook-config-name"), o.WebhookConfigName, msg))
	}
	return errs
}

// Hosts are the names the self-signed serving certificate is for: the
// Service's DNS names, the host of --url-base, and --extra-sans.
func (o *Options) Hosts() []string {
	svc, ns := o.ServiceName, o.ServiceNamespace
	hosts := []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}
	if o.URLBase != "" {
		if u, err := url.Parse(o.URLBase); err == nil && u.Hostname() != "" {
			if h := u.Hostname(); !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	for _, san := range o.ExtraSANs {
		if !slices.Contains(hosts, san) {
			hosts = append(hosts, san)
		}
	}
	return hosts
}

// Target is where the API server reaches the webhook server: --url-base,
// or port 443 of the Service.
func (o *Options) Target() registration.Target {
	return registration.Target{URLBase: o.URLBase, ServiceName: o.ServiceName, ServiceNamespace: o.ServiceNamespace}
}

// NewSetup loads or issues the serving certificate and returns the setup
// with its webhook server; the caller fills in Cache, Cached, Client and
// Hooks, registers the handlers, and adds the setup (and Watcher, when
// set) to its manager.
func (o *Options) NewSetup() (*Setup, error) {
	s := &Setup{Register: o.Register, ConfigName: o.WebhookConfigName, Target: o.Target()}
	var tlsOpts []func(*tls.Config)
	if o.SelfSigned {
		var err error
		if s.SelfSigned, err = certs.New(certs.Options{Dir: o.CertDir, Hosts: o.Hosts()}); err != nil {
			return nil, err
		}
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.GetCertificate = s.SelfSigned.GetCertificate })
	} else {
		watcher, err := certwatcher.New(o.TLSCertFile, o.TLSPrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the serving certificate: %w", err)
		}
		s.Watcher = watcher
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.GetCertificate = watcher.GetCertificate })
		if o.CAFile != "" {
			if s.CABundle, err = os.ReadFile(o.CAFile); err != nil {
				return nil, fmt.Errorf("--ca-file: %w", err)
			}
		}
	}
	s.Server = webhook.NewServer(webhook.Options{Host: o.BindAddress, Port: o.Port, TLSOpts: tlsOpts})
	return s, nil
}
