package fedenv

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// GlobalProcess configures caldera-global run as a process.
type GlobalProcess struct {
	// BinDir holds the caldera-global binary.
	BinDir string
	// Kubeconfig is caldera-global's identity on the Karmada API server;
	// AdminKubeconfig an administrator's, to check that it answers.
	Kubeconfig, AdminKubeconfig string
	// Dir keeps its certificates and log.
	Dir string
	// Verbosity is its log level.
	Verbosity int
	// Change, when set, changes its options (those with a flag below).
	Change func(*options.Options)
}

// StartGlobalProcess runs the caldera-global binary against the Karmada API
// server until the test ends, with its defaults but for loopback addresses
// and what Change sets, and waits until its webhook answers; it returns
// the process and the address of its metrics.
func StartGlobalProcess(t testing.TB, ctx context.Context, g GlobalProcess) (*controlplane.Component, string) {
	t.Helper()
	var ports [3]int
	for i := range ports {
		p, err := controlplane.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	port, health, metrics := ports[0], ports[1], ports[2]
	o := options.NewOptions()
	if g.Change != nil {
		g.Change(o)
	}
	args := []string{
		"--kubeconfig=" + g.Kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port),
		fmt.Sprintf("--url-base=https://127.0.0.1:%d", port), "--extra-sans=127.0.0.1",
		"--cert-dir=" + filepath.Join(g.Dir, "certs"),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", health),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
		"--leader-elect=" + strconv.FormatBool(o.LeaderElect),
		"--heartbeat=" + o.Heartbeat.String(),
		"--starvation-wait=" + o.StarvationWait.String(),
		"--report-grace=" + o.ReportGrace.String(),
		"--apply-failure-grace=" + o.ApplyFailureGrace.String(),
		"--hyperjob-start-timeout=" + o.HyperJobStartTimeout.String(),
		"--member-lost-after=" + o.MemberLostAfter.String(),
		fmt.Sprintf("--v=%d", g.Verbosity),
	}
	for _, p := range o.DataProviders {
		args = append(args, "--data-provider="+p)
	}
	global, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name: "caldera-global", Binary: filepath.Join(g.BinDir, "caldera-global"), Dir: g.Dir, Args: args,
		ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/readyz", health), StartTimeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = global.Stop() })
	admin, err := ClientFor(g.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	WaitForSuspension(t, ctx, admin)
	return global, fmt.Sprintf("https://127.0.0.1:%d/metrics", metrics)
}

// WaitForSuspension waits until the Karmada API server suspends a new
// binding of a Volcano Job: caldera-global's webhook answers. alive, when
// given, says why waiting is pointless.
func WaitForSuspension(t testing.TB, ctx context.Context, c client.Client, alive ...func() error) {
	t.Helper()
	poll.Eventually(t, ctx, 2*time.Minute, "caldera-global", func() (bool, string) {
		for _, a := range alive {
			if err := a(); err != nil {
				t.Fatalf("waiting for caldera-global: %v", err)
			}
		}
		probe := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe-job"},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: "default", Name: "probe"}}}
		if err := c.Create(ctx, probe, client.DryRunAll); err != nil {
			return false, err.Error()
		}
		return probe.Spec.SchedulingSuspended(), "a new binding not suspended"
	})
}

// MetricsReaderToken returns a token of a service account of the Karmada
// API server that may get /metrics, as Prometheus's would be: caldera-global
// asks that API server who a caller of its metrics is.
func MetricsReaderToken(t testing.TB, ctx context.Context, c client.Client) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "metrics-reader"}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}}
	for _, o := range []client.Object{sa, role, binding} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
