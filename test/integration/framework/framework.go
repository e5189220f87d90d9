// Package framework is the shared harness of the integration tests: it starts
// a real etcd and kube-apiserver (and, when asked, kwok with fake nodes),
// installs every Caldera CRD, hands the tests a client, and tears everything
// down, also when a test fails or panics.
package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/deploy"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/federation/clusterapi"
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
	clusterapicrds "github.com/caldera-sh/caldera/test/crds/clusterapi"
	karmadacrds "github.com/caldera-sh/caldera/test/crds/karmada"
)

// Options choose what the harness starts.
type Options struct {
	// Kwok starts kwok so that fake nodes become Ready and bound pods run.
	Kwok bool
	// Nodes are created (and awaited Ready) after start; they need Kwok.
	Nodes []controlplane.NodeSpec
	// APIServerArgs are extra kube-apiserver flags.
	APIServerArgs []string
	// Users are identities the API server knows besides its administrator,
	// in no group: what they may do is what RBAC grants them
	// (f.Cluster.APIServer.KubeconfigFor writes their kubeconfigs).
	Users []string
	// Karmada installs the CRDs of Caldera's Karmada API mirror and adds
	// its types to the scheme: the API server plays a Karmada control
	// plane.
	Karmada bool
	// ClusterAPI installs the CRDs of Caldera's Cluster API mirror and
	// adds its types to the scheme: the API server plays a Cluster API
	// management cluster too.
	ClusterAPI bool
	// Setup, when set, runs once the control plane is up (to create
	// shared objects or start components for the whole package); the
	// function it returns runs before the control plane stops.
	Setup func(ctx context.Context, f *Framework) (teardown func(), err error)
}

// Framework is a running control plane for one test package.
type Framework struct {
	// Dir holds every log and file of the control plane.
	Dir     string
	BinDir  string
	Etcd    *controlplane.Etcd
	Cluster *controlplane.Cluster
	Client  client.Client
	Scheme  *runtime.Scheme
}

// Start starts the control plane. Call Stop when done, also on error paths.
func Start(ctx context.Context, o Options) (_ *Framework, err error) {
	f := &Framework{}
	defer func() {
		if err != nil {
			_ = f.Stop()
		}
	}()
	if f.BinDir, err = controlplane.FindBinDir(); err != nil {
		return nil, err
	}
	if f.Dir, err = os.MkdirTemp("", "caldera-integration-"); err != nil {
		return nil, err
	}
	if f.Scheme, err = scheme.New(); err != nil {
		return nil, err
	}
	crds, err := controlplane.ReadCRDs(deploy.CRDs, deploy.CRDDir)
	if err != nil {
		return nil, err
	}
	if o.Karmada {
		more, err := controlplane.ReadCRDs(karmadacrds.CRDs, karmadacrds.Dir)
		if err != nil {
			return nil, err
		}
		crds = append(crds, more...)
		if err := karmada.AddToScheme(f.Scheme); err != nil {
			return nil, err
		}
	}
	if o.ClusterAPI {
		more, err := controlplane.ReadCRDs(clusterapicrds.CRDs, clusterapicrds.Dir)
		if err != nil {
			return nil, err
		}
		crds = append(crds, more...)
		if err := clusterapi.AddToScheme(f.Scheme); err != nil {
			return nil, err
		}
	}
	if f.Etcd, err = controlplane.StartEtcd(ctx, controlplane.EtcdOptions{BinDir: f.BinDir, Dir: f.Dir}); err != nil {
		return nil, err
	}
	f.Cluster, err = controlplane.StartCluster(ctx, f.Etcd, controlplane.ClusterOptions{
		Name:          "integration",
		BinDir:        f.BinDir,
		Dir:           filepath.Join(f.Dir, "integration"),
		Kwok:          o.Kwok || len(o.Nodes) > 0,
		CRDs:          crds,
		Scheme:        f.Scheme,
		APIServerArgs: o.APIServerArgs,
		Users:         o.Users,
	})
	if err != nil {
		return nil, err
	}
	f.Client = f.Cluster.Client
	if len(o.Nodes) > 0 {
		if err := controlplane.CreateNodes(ctx, f.Client, o.Nodes); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// RESTConfig returns an administrator's client configuration.
func (f *Framework) RESTConfig() *rest.Config { return f.Cluster.RESTConfig() }

// Kubeconfig returns the path of an administrator's kubeconfig.
func (f *Framework) Kubeconfig() string { return f.Cluster.APIServer.Kubeconfig }

// Stop stops every process the framework started.
func (f *Framework) Stop() error {
	if f == nil {
		return nil
	}
	return errors.Join(f.Cluster.Stop(), f.Etcd.Stop())
}

// Main runs a test package's tests against a framework started with o, and
// returns the exit code for os.Exit. The framework is available through *fw
// while the tests run. The control plane's files are removed when the tests
// pass and kept (their path printed) when they fail.
func Main(m *testing.M, o Options, fw **Framework) int {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	f, err := Start(ctx, o)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the integration control plane: %v\n", err)
		return 1
	}
	*fw = f
	var teardown func()
	if o.Setup != nil {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
		teardown, err = o.Setup(sctx, f)
		scancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "setting up the test package: %v\n", err)
			_ = f.Stop()
			return 1
		}
	}
	// A panicking test kills this process; the control-plane processes die
	// with it (see controlplane), so only the normal path needs Stop.
	code := m.Run()
	if teardown != nil {
		teardown()
	}
	if err := f.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the integration control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code == 0 {
		_ = os.RemoveAll(f.Dir)
	} else {
		fmt.Fprintf(os.Stderr, "control-plane logs kept in %s\n", f.Dir)
	}
	return code
}

// StartKarmada starts a second API server, on the framework's etcd, with
// the CRDs of Caldera's Karmada API mirror: it plays a Karmada control
// plane (and the cluster hosting it) beside the member the framework
// runs. Its client's scheme knows Caldera's and the mirror's types. It
// stops when t ends.
func (f *Framework) StartKarmada(t testing.TB) *controlplane.Cluster {
	t.Helper()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := karmada.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	crds, err := controlplane.ReadCRDs(karmadacrds.CRDs, karmadacrds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := controlplane.StartCluster(t.Context(), f.Etcd, controlplane.ClusterOptions{
		Name: "karmada", BinDir: f.BinDir, Dir: filepath.Join(f.Dir, "karmada"), CRDs: crds, Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Error(err)
		}
	})
	return k
}
