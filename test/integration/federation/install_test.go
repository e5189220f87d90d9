//go:build integration

package federation

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestInstalledAsDocumented: deploy/global/karmada applied as
// docs/federation.md says, caldera-global run with its defaults (leader
// election on) as the user the install grants: it leads and places work.
// Named a leader election namespace that does not exist, it refuses to
// start, saying why, rather than hold every job for good.
func TestInstalledAsDocumented(t *testing.T) {
	ctx := t.Context()
	// As karmadactl join leaves it: Karmada's namespace of its members'
	// credentials.
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-cluster"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := fw.Kubectl(ctx, "apply", "--server-side", "-k", filepath.Join("..", "..", "..", "deploy", "global", "karmada"))
	if err != nil {
		t.Fatalf("kubectl apply -k deploy/global/karmada: %v\n%s%s", err, stdout, stderr)
	}
	kubeconfig := filepath.Join(t.TempDir(), "caldera-global.kubeconfig")
	if err := fw.Cluster.APIServer.KubeconfigFor("caldera-global", kubeconfig); err != nil {
		t.Fatal(err)
	}

	// A missing lease namespace: refused at start, with the reason.
	o := options.NewOptions()
	o.Kubeconfig, o.LeaderElectionNamespace = kubeconfig, "nowhere"
	o.BindAddress, o.HealthProbeBindAddress = "127.0.0.1", "0"
	if o.Port, err = controlplane.FreePort(); err != nil {
		t.Fatal(err)
	}
	o.CertDir = filepath.Join(t.TempDir(), "certs")
	o.Register = false
	c, err := component.Configure(o)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = app.Run(rctx, c)
	if want := `--leader-election-namespace: namespace "nowhere" does not exist on the Karmada API server`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("caldera-global with a missing lease namespace: %v, want an error containing %q", err, want)
	}

	// As installed: it leads and places a job.
	const ns = "installed"
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	readyCluster(t, "installed-member", "8")
	if err := fw.Client.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "installed"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	startGlobal(t, func(o *options.Options) {
		o.Kubeconfig = kubeconfig
		o.LeaderElect = true
	})
	if err := fw.Client.Create(ctx, job(ns, "first", "installed")); err != nil {
		t.Fatal(err)
	}
	if err := fw.Client.Create(ctx, fourCPUBinding(ns, "first", "installed-member")); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), time.Minute, "the job placed by the leader", func() (bool, string) {
		cl := placedIn(t, ns, "first-job")
		return cl == "installed-member", "placed in " + cl
	})
}
