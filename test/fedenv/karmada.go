package fedenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/deploy"
	"github.com/caldera-sh/caldera/deploy/global"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
	"github.com/caldera-sh/caldera/pkg/localenv"
	karmadacrds "github.com/caldera-sh/caldera/test/crds/karmada"
)

// Karmada is the Karmada control plane the stand-in's federation runs on:
// an etcd and a kube-apiserver serving the Karmada mirror's and Caldera's
// kinds, with deploy/global/karmada's namespaces and RBAC.
type Karmada struct {
	Etcd    *controlplane.Etcd
	Cluster *controlplane.Cluster
	// GlobalKubeconfig is caldera-global's identity there: the user
	// caldera-global, with the permissions of
	// deploy/global/karmada/karmada-rbac.yaml and no others.
	GlobalKubeconfig string
}

// StartKarmada starts the control plane in dir until the test ends. With
// localenv.UsageDirEnv set, what caldera-global asks of it is audited for
// make test-rbac.
func StartKarmada(t testing.TB, ctx context.Context, binDir, dir string) *Karmada {
	t.Helper()
	etcd, err := controlplane.StartEtcd(ctx, controlplane.EtcdOptions{BinDir: binDir, Dir: filepath.Join(dir, "karmada-etcd")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Stop() })
	scheme, err := apischeme.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := karmada.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	crds, err := controlplane.ReadCRDs(deploy.CRDs, deploy.CRDDir)
	if err != nil {
		t.Fatal(err)
	}
	more, err := controlplane.ReadCRDs(karmadacrds.CRDs, karmadacrds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var auditArgs []string
	auditDir := filepath.Join(dir, "karmada-audit")
	usageDir := os.Getenv(localenv.UsageDirEnv)
	if usageDir != "" {
		if err := os.MkdirAll(auditDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if auditArgs, err = localenv.AuditArgs(auditDir, []string{"caldera-global"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	kp, err := controlplane.StartCluster(ctx, etcd, controlplane.ClusterOptions{
		Name: "karmada", BinDir: binDir, Dir: filepath.Join(dir, "karmada"), CRDs: append(crds, more...), Scheme: scheme,
		Users: []string{"caldera-global"}, APIServerArgs: auditArgs,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kp.Stop() })
	if usageDir != "" {
		// Runs before the API server stops, after caldera-global did.
		t.Cleanup(func() {
			if err := localenv.WriteUsage(auditDir, usageDir); err != nil {
				t.Errorf("summarizing the Karmada API server's audit log: %v", err)
			}
		})
	}
	kc := kp.Client
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-cluster"}}); err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range []string{"karmada/namespaces.yaml", "karmada/karmada-rbac.yaml"} {
		raw, err := global.Manifests.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		more, err := localenv.DecodeManifests(raw)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, more...)
	}
	for _, obj := range objs {
		if err := kc.Create(ctx, obj); err != nil {
			t.Fatalf("deploy/global/karmada: %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	globalConfig := filepath.Join(dir, "caldera-global.kubeconfig")
	if err := kp.APIServer.KubeconfigFor("caldera-global", globalConfig); err != nil {
		t.Fatal(err)
	}
	return &Karmada{Etcd: etcd, Cluster: kp, GlobalKubeconfig: globalConfig}
}
