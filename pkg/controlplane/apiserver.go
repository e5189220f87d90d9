package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// APIServerOptions configure a kube-apiserver.
type APIServerOptions struct {
	// Name names the cluster; it is the etcd prefix, the kubeconfig cluster
	// and context name and the log file name.
	Name string
	// BinDir holds the kube-apiserver binary.
	BinDir string
	// Dir holds certificates, keys, the kubeconfig and the log.
	Dir string
	// Port is the secure port; 0 picks a free one.
	Port int
	// ExtraArgs are appended to the command line (later flags win).
	ExtraArgs []string
	// Users are further identities the server knows by a token of their
	// own, in no group: what they may do is what RBAC grants them
	// (KubeconfigFor writes their kubeconfigs).
	Users []string
	// StartTimeout bounds the wait for /readyz; 0 means 120s (a busy
	// two-core machine can take over a minute).
	StartTimeout time.Duration
}

// APIServer is a running kube-apiserver on loopback, authenticated by a
// bearer token of a member of system:masters.
type APIServer struct {
	Name string
	// URL is the https URL of the server.
	URL string
	// Kubeconfig is the path of a kubeconfig for an administrator.
	Kubeconfig string
	// CAData is the PEM of the serving certificate chain.
	CAData []byte
	token  string
	// tokens are the Users' tokens.
	tokens map[string]string
	proc   *process
}

// StartAPIServer starts kube-apiserver against etcd and waits until /readyz
// answers ok.
func StartAPIServer(ctx context.Context, etcd *Etcd, o APIServerOptions) (*APIServer, error) {
	return onFreePorts(func() (*APIServer, error) { return startAPIServer(ctx, etcd, o) })
}

func startAPIServer(ctx context.Context, etcd *Etcd, o APIServerOptions) (*APIServer, error) {
	bin, err := findBinary(o.BinDir, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		return nil, fmt.Errorf("APIServerOptions.Name must be set")
	}
	port, err := portOrFree(o.Port)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	tokens := map[string]string{}
	lines := token + ",caldera-admin,caldera-admin,system:masters\n"
	for _, u := range o.Users {
		if tokens[u], err = randomToken(); err != nil {
			return nil, err
		}
		lines += fmt.Sprintf("%s,%s,%s\n", tokens[u], u, u)
	}
	tokenFile := filepath.Join(o.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(lines), 0o600); err != nil {
		return nil, err
	}
	keyFile, pubFile, err := writeServiceAccountKeys(o.Dir)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(o.Dir, "certs")
	args := []string{
		"--etcd-servers=" + etcd.URL,
		"--etcd-prefix=/" + o.Name,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// 1.37 refuses a loopback advertise address with the default
		// endpoint reconciler.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + certDir,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pubFile,
		"--service-account-signing-key-file=" + keyFile,
		"--service-cluster-ip-range=10.96.0.0/16",
		// Without kube-controller-manager nothing removes the not-ready
		// taint TaintNodesByCondition puts on new nodes, and no token
		// controller serves ServiceAccount admission.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--allow-privileged=true",
		"--profiling=false",
	}
	args = append(args, o.ExtraArgs...)
	p, err := startProcess("kube-apiserver-"+o.Name, bin, args, o.Dir)
	if err != nil {
		return nil, err
	}
	s := &APIServer{Name: o.Name, URL: "https://" + hostPort(port), token: token, tokens: tokens, proc: p}

	timeout := o.StartTimeout
	if timeout == 0 {
		timeout = 120 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certFile := filepath.Join(certDir, "apiserver.crt")
	if err := waitFor(wctx, p, "kube-apiserver "+o.Name+" /readyz", func() error {
		// The server writes its self-signed certificate while starting;
		// read it again until the server is ready, so a file caught half
		// written is not kept.
		ca, err := readCertificate(certFile)
		if err != nil {
			return err
		}
		s.CAData = ca
		return s.ready()
	}); err != nil {
		_ = p.stop()
		return nil, fmt.Errorf("starting kube-apiserver %s: %w", o.Name, err)
	}
	s.Kubeconfig = filepath.Join(o.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(s.kubeconfig(), s.Kubeconfig); err != nil {
		_ = p.stop()
		return nil, fmt.Errorf("writing kubeconfig: %w", err)
	}
	return s, nil
}

func (s *APIServer) ready() error {
	cfg := s.RESTConfig()
	cfg.Timeout = 2 * time.Second
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	return httpOK(client, s.URL+"/readyz?verbose")
}

// readCertificate returns the PEM file at path once it holds a whole
// certificate.
func readCertificate(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s holds no PEM certificate yet", path)
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// RESTConfig returns a client configuration for an administrator.
func (s *APIServer) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            s.URL,
		BearerToken:     s.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData},
		QPS:             1000,
		Burst:           2000,
	}
}

func (s *APIServer) kubeconfig() clientcmdapi.Config {
	return clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			s.Name: {Server: s.URL, CertificateAuthorityData: s.CAData},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			s.Name + "-admin": {Token: s.token},
		},
		Contexts: map[string]*clientcmdapi.Context{
			s.Name: {Cluster: s.Name, AuthInfo: s.Name + "-admin", Namespace: "default"},
		},
		CurrentContext: s.Name,
	}
}

// KubeconfigFor writes to path a kubeconfig of one of the Users.
func (s *APIServer) KubeconfigFor(user, path string) error {
	token, ok := s.tokens[user]
	if !ok {
		return fmt.Errorf("API server %s has no user %q", s.Name, user)
	}
	return s.KubeconfigWithToken(user, token, path)
}

// KubeconfigWithToken writes to path a kubeconfig that authenticates with
// a bearer token (a service account's, say) under the name user.
func (s *APIServer) KubeconfigWithToken(user, token, path string) error {
	cfg := s.kubeconfig()
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{user: {Token: token}}
	cfg.Contexts[s.Name].AuthInfo = user
	return clientcmd.WriteToFile(cfg, path)
}

// Restart kills the API server (SIGKILL, as a crash would) and starts it
// again with the same arguments (port, certificates, tokens), waiting
// until /readyz answers ok.
func (s *APIServer) Restart(ctx context.Context) error {
	p, err := s.proc.restart()
	if err != nil {
		return err
	}
	s.proc = p
	wctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	return waitFor(wctx, p, "kube-apiserver "+s.Name+" /readyz", s.ready)
}

// Signal sends sig to the API server (SIGSTOP pauses it, SIGCONT resumes
// it).
func (s *APIServer) Signal(sig syscall.Signal) error { return s.proc.signal(sig) }

// Stop stops the API server.
func (s *APIServer) Stop() error {
	if s == nil {
		return nil
	}
	return s.proc.stop()
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeServiceAccountKeys writes the RSA key pair kube-apiserver signs and
// verifies service account tokens with.
func writeServiceAccountKeys(dir string) (keyFile, pubFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", fmt.Errorf("generating service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	keyFile = filepath.Join(dir, "sa.key")
	pubFile = filepath.Join(dir, "sa.pub")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pubFile, pubPEM, 0o644); err != nil {
		return "", "", err
	}
	return keyFile, pubFile, nil
}
