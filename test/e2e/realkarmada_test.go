//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/localenv"
	"github.com/caldera-sh/caldera/pkg/webhooks/certs"
	"github.com/caldera-sh/caldera/test/fedenv"
	"github.com/caldera-sh/caldera/test/poll"
)

// The real-Karmada tier (make test-karmada) runs the federation scenarios
// on a Karmada control plane built from Karmada's own source:
// CALDERA_KARMADA_BIN names the folder of its binaries
// (karmada-aggregated-apiserver, karmada-webhook,
// karmada-controller-manager, karmada-scheduler, karmadactl) and
// CALDERA_KARMADA_SRC the source tree they were built from (its CRDs and
// webhook configuration are applied from there). Unset, the scenarios run
// against the stand-in.

// realKarmadaDir is the folder of Karmada's binaries when the real tier is
// asked for, "" otherwise.
func realKarmadaDir() string { return os.Getenv("CALDERA_KARMADA_BIN") }

// realKarmada is a Karmada control plane on loopback: its own etcd and
// kube-apiserver (karmada-apiserver), the aggregated apiserver behind its
// APIService, karmada-webhook, kube-controller-manager (namespaces and
// garbage collection, as Karmada runs it), karmada-controller-manager and
// karmada-scheduler; members joined with karmadactl join through a TCP
// proxy each, which setReady closes to make a member unreachable.
type realKarmada struct {
	t       *testing.T
	bin     string
	dir     string
	kas     *controlplane.APIServer
	gates   string
	proxies map[string]*memberProxy

	mu          sync.Mutex
	controllers *controlplane.Component
	scheduler   *controlplane.Component
}

func (k *realKarmada) Name() string { return "karmada" }

func (k *realKarmada) SetReady(_ context.Context, member string, ready bool) error {
	p := k.proxies[member]
	if p == nil {
		return fmt.Errorf("no member %s", member)
	}
	p.setOpen(ready)
	return nil
}

// restartControllers kills karmada-controller-manager and
// karmada-scheduler, as a crash would, and starts them again: the
// detector re-applies every policy, the scheduler reads every binding.
func (k *realKarmada) RestartControllers(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.controllers.Kill()
	k.scheduler.Kill()
	var err error
	if k.controllers, err = k.startControllerManager(ctx); err != nil {
		return err
	}
	k.scheduler, err = k.startScheduler(ctx)
	return err
}

// unapplied lists the Works a member refused: their Applied condition is
// not True.
func (k *realKarmada) Unapplied(ctx context.Context) ([]string, error) {
	c, err := fedenv.ClientFor(k.kas.Kubeconfig)
	if err != nil {
		return nil, err
	}
	works := &unstructured.UnstructuredList{}
	works.SetAPIVersion("work.karmada.io/v1alpha1")
	works.SetKind("WorkList")
	if err := c.List(ctx, works); err != nil {
		return nil, err
	}
	var out []string
	for _, w := range works.Items {
		// A Work not tried yet has no Applied condition.
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Applied" && m["status"] != "True" {
				out = append(out, fmt.Sprintf("%s/%s: %s", w.GetNamespace(), w.GetName(), m["message"]))
			}
		}
	}
	return out, nil
}

func (k *realKarmada) binary(name string) string { return filepath.Join(k.bin, name) }

func (k *realKarmada) startControllerManager(ctx context.Context) (*controlplane.Component, error) {
	health, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + k.kas.Kubeconfig,
		"--leader-elect=false",
		"--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", health),
		// Members' health is probed every second; a member is NotReady
		// after two seconds of failed probes and Ready after one.
		"--cluster-status-update-frequency=1s",
		"--cluster-failure-threshold=2s",
		"--cluster-success-threshold=1s",
		"--cluster-monitor-period=1s",
		"--cluster-monitor-grace-period=5s",
		"--cluster-startup-grace-period=10s",
		// Works that failed while a member was away are retried within
		// seconds of its return, not after up to 1,000 s.
		"--rate-limiter-max-delay=2s",
	}
	if k.gates != "" {
		args = append(args, "--feature-gates="+k.gates)
	}
	return controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name: "karmada-controller-manager", Binary: k.binary("karmada-controller-manager"), Args: args, Dir: k.dir,
		ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/healthz", health), StartTimeout: 2 * time.Minute,
	})
}

func (k *realKarmada) startScheduler(ctx context.Context) (*controlplane.Component, error) {
	health, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + k.kas.Kubeconfig, "--leader-elect=false", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", health),
	}
	if k.gates != "" {
		args = append(args, "--feature-gates="+k.gates)
	}
	return controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name: "karmada-scheduler", Binary: k.binary("karmada-scheduler"), Dir: k.dir, Args: args,
		ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/healthz", health), StartTimeout: 2 * time.Minute,
	})
}

// startRealFederation brings Karmada up, joins the members and installs
// caldera-global as docs/federation.md says, then runs caldera-global's
// binary with its kubeconfig of the user caldera-global.
func startRealFederation(t *testing.T, ctx context.Context, karmadaBin, binDir, dir string, o federationOptions, change func(*options.Options),
	members map[string]client.Client, envs map[string]*localenv.Environment) *federation {
	t.Helper()
	src := os.Getenv("CALDERA_KARMADA_SRC")
	if src == "" {
		t.Fatal("CALDERA_KARMADA_SRC must name the Karmada source tree CALDERA_KARMADA_BIN was built from")
	}
	for _, b := range []string{"karmada-aggregated-apiserver", "karmada-webhook", "karmada-controller-manager", "karmada-scheduler", "karmadactl"} {
		if _, err := os.Stat(filepath.Join(karmadaBin, b)); err != nil {
			t.Fatalf("CALDERA_KARMADA_BIN: %v", err)
		}
	}
	dir = filepath.Join(dir, "karmada")
	k := &realKarmada{t: t, bin: karmadaBin, dir: dir, proxies: map[string]*memberProxy{}}
	if o.components {
		k.gates = "MultiplePodTemplatesScheduling=true"
	}
	stop := func(c interface{ Stop() error }) { t.Cleanup(func() { _ = c.Stop() }) }

	// Certificates: the front proxy's client certificate (the API server
	// proxies to the aggregated apiserver with it), and serving
	// certificates of the aggregated apiserver and the webhook.
	fp, err := newClientCert(filepath.Join(dir, "front-proxy"), "front-proxy-client")
	if err != nil {
		t.Fatal(err)
	}
	agg, err := certs.New(certs.Options{Dir: filepath.Join(dir, "aggregated-certs"),
		Hosts: []string{"karmada-aggregated-apiserver.karmada-system.svc", "localhost", "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	whCerts, err := certs.New(certs.Options{Dir: filepath.Join(dir, "webhook-certs"), Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}

	// karmada-apiserver.
	etcd, err := controlplane.StartEtcd(ctx, controlplane.EtcdOptions{BinDir: binDir, Dir: filepath.Join(dir, "etcd")})
	if err != nil {
		t.Fatal(err)
	}
	stop(etcd)
	k.kas, err = controlplane.StartAPIServer(ctx, etcd, controlplane.APIServerOptions{
		Name: "karmada", BinDir: binDir, Dir: filepath.Join(dir, "apiserver"), Users: []string{"caldera-global"},
		ExtraArgs: []string{
			"--requestheader-client-ca-file=" + fp.caFile,
			"--requestheader-allowed-names=front-proxy-client",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-username-headers=X-Remote-User",
			"--proxy-client-cert-file=" + fp.certFile,
			"--proxy-client-key-file=" + fp.keyFile,
			"--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount,TaintNodesByCondition",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop(k.kas)
	kc, err := fedenv.ClientFor(k.kas.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), append([]string{"--kubeconfig=" + k.kas.Kubeconfig}, args...)...)
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-system"}}); err != nil {
		t.Fatal(err)
	}
	// Karmada's CRDs, as its installers apply them (without the
	// conversion webhooks of v1alpha1 bindings, which nothing here reads).
	kubectl("apply", "--server-side", "-f", filepath.Join(src, "charts/karmada/_crds/bases"), "--recursive")

	// The aggregated apiserver, behind its APIService and an ExternalName
	// Service, as Karmada installs it.
	aggPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	aggregated, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name: "karmada-aggregated-apiserver", Binary: k.binary("karmada-aggregated-apiserver"), Dir: dir,
		Args: []string{
			"--kubeconfig=" + k.kas.Kubeconfig,
			"--authentication-kubeconfig=" + k.kas.Kubeconfig,
			"--authorization-kubeconfig=" + k.kas.Kubeconfig,
			"--etcd-servers=" + etcd.URL,
			"--etcd-prefix=/karmada-aggregated",
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", aggPort),
			"--tls-cert-file=" + filepath.Join(dir, "aggregated-certs", certs.CertFile),
			"--tls-private-key-file=" + filepath.Join(dir, "aggregated-certs", certs.KeyFile),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop(aggregated)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: "karmada-aggregated-apiserver"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if err := kc.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1alpha1.cluster.karmada.io"},
		"spec": map[string]any{
			"caBundle": base64.StdEncoding.EncodeToString(agg.CABundle()),
			"group":    "cluster.karmada.io", "version": "v1alpha1", "groupPriorityMinimum": int64(2000), "versionPriority": int64(10),
			"service": map[string]any{"name": "karmada-aggregated-apiserver", "namespace": "karmada-system", "port": int64(aggPort)},
		},
	}}
	if err := kc.Create(ctx, apiService); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, "Clusters served through the aggregated apiserver", func() (bool, string) {
		var cls clusterv1alpha1.ClusterList
		if err := kc.List(ctx, &cls); err != nil {
			return false, err.Error()
		}
		return true, ""
	})

	// karmada-webhook and its configurations, pointed at loopback.
	whPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	whArgs := []string{
		"--kubeconfig=" + k.kas.Kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", whPort),
		"--cert-dir=" + filepath.Join(dir, "webhook-certs"),
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
	}
	if k.gates != "" {
		whArgs = append(whArgs, "--feature-gates="+k.gates)
	}
	webhook, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name: "karmada-webhook", Binary: k.binary("karmada-webhook"), Dir: dir, Args: whArgs,
	})
	if err != nil {
		t.Fatal(err)
	}
	stop(webhook)
	raw, err := os.ReadFile(filepath.Join(src, "artifacts/deploy/webhook-configuration.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.ReplaceAll(string(raw), "https://karmada-webhook.karmada-system.svc:443", fmt.Sprintf("https://127.0.0.1:%d", whPort))
	conf = strings.ReplaceAll(conf, "{{caBundle}}", base64.StdEncoding.EncodeToString(whCerts.CABundle()))
	confFile := filepath.Join(dir, "webhook-configuration.yaml")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl("apply", "--server-side", "-f", confFile)

	// Namespaces and garbage collection on karmada-apiserver, as Karmada
	// runs kube-controller-manager.
	kcm, err := controlplane.StartKubeControllerManager(ctx, k.kas, controlplane.KubeControllerManagerOptions{
		BinDir: binDir, Dir: filepath.Join(dir, "kube-controller-manager"), Controllers: []string{"namespace", "garbagecollector"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop(kcm)

	// Caldera's CRDs on the Karmada API server, as docs/federation.md
	// says, before Karmada's controllers start, so that their detector
	// knows Volcano's kinds from the start.
	kubectl("apply", "--server-side", "-k", "deploy/crds")
	kubectl("wait", "--for=condition=Established", "--all", "crd", "--timeout=60s")

	if k.controllers, err = k.startControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		_ = k.controllers.Stop()
	})
	if k.scheduler, err = k.startScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		_ = k.scheduler.Stop()
	})

	// The members join with karmadactl join, through their proxies. Join
	// makes service accounts in the member and waits for their tokens,
	// which the member's kube-controller-manager writes.
	for _, name := range slices.Sorted(maps.Keys(envs)) {
		env := envs[name]
		mkcm, err := controlplane.StartKubeControllerManager(ctx, env.APIServer(), controlplane.KubeControllerManagerOptions{
			BinDir: binDir, Dir: filepath.Join(dir, name+"-kube-controller-manager"),
			Controllers: []string{"serviceaccount-token", "garbagecollector", "namespace"},
			ExtraArgs:   []string{"--root-ca-file=" + writeCA(t, filepath.Join(dir, name+"-ca.crt"), env.APIServer().CAData)},
		})
		if err != nil {
			t.Fatal(err)
		}
		stop(mkcm)
		p, err := startMemberProxy(env.APIServer().URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.close)
		k.proxies[name] = p
		cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cfg.Clusters {
			c.Server = "https://" + p.addr
		}
		viaProxy := filepath.Join(dir, name+".kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, viaProxy); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, k.binary("karmadactl"), "join", name, "--kubeconfig="+k.kas.Kubeconfig, "--cluster-kubeconfig="+viaProxy)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("karmadactl join %s: %v\n%s", name, err, out)
		}
	}
	// The rest of caldera-global's install, once members are joined.
	kubectl("apply", "--server-side", "-k", "deploy/global/karmada")

	// Ready, with Volcano's kinds known in each member.
	poll.Eventually(t, ctx, 3*time.Minute, "members Ready with Volcano's kinds", func() (bool, string) {
		var cls clusterv1alpha1.ClusterList
		if err := kc.List(ctx, &cls); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, cl := range cls.Items {
			c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			if c != nil && c.Status == metav1.ConditionTrue && enables(&cl, "batch.volcano.sh/v1alpha1", "Job") && enables(&cl, "scheduling.volcano.sh/v1beta1", "Queue") {
				ready++
			}
		}
		return ready == len(envs), fmt.Sprintf("%d of %d", ready, len(envs))
	})

	// caldera-global, as the user caldera-global the install grants.
	globalConfig := filepath.Join(dir, "caldera-global.kubeconfig")
	if err := k.kas.KubeconfigFor("caldera-global", globalConfig); err != nil {
		t.Fatal(err)
	}
	_, metrics := fedenv.StartGlobalProcess(t, ctx, fedenv.GlobalProcess{BinDir: binDir, Kubeconfig: globalConfig, AdminKubeconfig: k.kas.Kubeconfig,
		Dir: filepath.Join(dir, "global"), Verbosity: 2, Change: change}) // --v=2: every decision and release in the log

	cluster := &controlplane.Cluster{Name: "karmada", APIServer: k.kas, Client: kc}
	return &federation{karmada: kc, cluster: cluster, members: members, memberEnvs: envs, plane: k,
		globalMetrics: metrics, metricsToken: fedenv.MetricsReaderToken(t, ctx, kc)}
}

// enables says whether the Cluster's status lists the kind.
func enables(cl *clusterv1alpha1.Cluster, groupVersion, kind string) bool {
	for _, e := range cl.Status.APIEnablements {
		if e.GroupVersion != groupVersion {
			continue
		}
		for _, r := range e.Resources {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}

func writeCA(t *testing.T, path string, ca []byte) string {
	t.Helper()
	if err := os.WriteFile(path, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// repoRoot is the repository's root (where deploy/ is).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..")
}

// memberProxy passes TCP connections to a member's API server while open;
// closed, it cuts the connections it passes and refuses new ones at once,
// as an unreachable member would.
type memberProxy struct {
	addr   string
	target string
	ln     net.Listener

	mu    sync.Mutex
	open  bool
	conns map[net.Conn]bool
}

func startMemberProxy(targetURL string) (*memberProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &memberProxy{addr: ln.Addr().String(), target: strings.TrimPrefix(targetURL, "https://"), ln: ln, open: true, conns: map[net.Conn]bool{}}
	go p.serve()
	return p, nil
}

func (p *memberProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		open := p.open
		if open {
			p.conns[c] = true
		}
		p.mu.Unlock()
		if !open {
			_ = c.Close()
			continue
		}
		go p.pass(c)
	}
}

func (p *memberProxy) pass(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[up] = true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *memberProxy) setOpen(open bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = open
	if !open {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

func (p *memberProxy) close() {
	_ = p.ln.Close()
	p.setOpen(false)
}

// clientCert is a CA and a client certificate it signed.
type clientCert struct {
	caFile, certFile, keyFile string
}

// newClientCert writes to dir a new CA and a client certificate of the
// common name, signed by it.
func newClientCert(dir, commonName string) (*clientCert, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: commonName + "-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	c := &clientCert{caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "client.crt"), keyFile: filepath.Join(dir, "client.key")}
	for path, block := range map[string]*pem.Block{
		c.caFile: {Type: "CERTIFICATE", Bytes: caDER}, c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}
