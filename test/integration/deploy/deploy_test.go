//go:build integration

package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	agentapp "github.com/caldera-sh/caldera/cmd/caldera-agent/app"
	agentoptions "github.com/caldera-sh/caldera/cmd/caldera-agent/app/options"
	cmapp "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app"
	cmoptions "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
	schedapp "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	schedoptions "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app/options"
	webhookapp "github.com/caldera-sh/caldera/cmd/caldera-webhook/app"
	webhookoptions "github.com/caldera-sh/caldera/cmd/caldera-webhook/app/options"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	schedconfig "github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

const ns = "caldera-system"

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := fw.Kubectl(t.Context(), args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// TestKustomizationsDryRun: every kustomization of deploy/ applies in a
// server-side dry run, each to the cluster it is for (this API server
// plays all of them: it serves the Karmada mirror's CRDs too).
func TestKustomizationsDryRun(t *testing.T) {
	// What the clusters have before: the namespaces Karmada's and
	// Caldera's installations make.
	ensureNamespace(t, ns)
	ensureNamespace(t, "karmada-cluster")
	for _, dir := range []string{"crds", "member", "global/karmada", "global/host", "global/cluster-api"} {
		t.Run(dir, func(t *testing.T) {
			out := kubectl(t, "apply", "--server-side", "--dry-run=server", "--field-manager=deploy-test", "-k", filepath.Join("..", "..", "..", "deploy", dir))
			if !strings.Contains(out, "(server dry run)") {
				t.Errorf("not a server dry run:\n%s", out)
			}
		})
	}
	// The member base: every Deployment is probed and leader-elected where
	// it runs more than one replica that must not act twice.
	rendered := kubectl(t, "kustomize", "../../../deploy/member")
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		c := d.Spec.Template.Spec.Containers[0]
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			t.Errorf("%s: probes %v %v", d.Name, c.ReadinessProbe, c.LivenessProbe)
		}
		if d.Spec.Template.Spec.ServiceAccountName != d.Name {
			t.Errorf("%s runs as %q", d.Name, d.Spec.Template.Spec.ServiceAccountName)
		}
		args := strings.Join(c.Args, " ")
		if d.Name != "caldera-webhook" && !strings.Contains(args, "--leader-elect=true --leader-election-namespace=caldera-system") {
			t.Errorf("%s: args %s", d.Name, args)
		}
	}
}

// impersonating writes a kubeconfig that acts as the service account.
func impersonating(t *testing.T, sa string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(fw.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = "system:serviceaccount:" + ns + ":" + sa
	}
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs a component until the test ends.
func run(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop", what)
		}
	})
}

// TestMemberRBAC: deploy/member/rbac.yaml applied, the four components run
// as their service accounts: the scheduler and the controller manager
// take their Leases in caldera-system; the webhook registers itself and
// refuses a job of no queue; a gang job runs, placed by the scheduler;
// the agent publishes its node's batch resources.
func TestMemberRBAC(t *testing.T) {
	ctx := t.Context()
	ensureNamespace(t, ns)
	kubectl(t, "apply", "--server-side", "--field-manager=deploy-test", "-f", "../../../deploy/member/rbac.yaml")
	for _, sa := range []string{"caldera-scheduler", "caldera-controller-manager", "caldera-webhook", "caldera-agent"} {
		if err := fw.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	// A node for the gang and the agent.
	node := controlplane.NodeSpec{Name: "rbac-node", Labels: map[string]string{config.ColocationLabel: "true"}, Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}}
	if err := controlplane.CreateNodes(ctx, fw.Client, []controlplane.NodeSpec{node}); err != nil {
		t.Fatal(err)
	}
	if err := fw.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: config.ConfigMapName}, Data: map[string]string{
		config.ConfigMapKey: `{"globalConfig": {"overSubscriptionConfig": {"enable": true, "overSubscriptionTypes": "cpu,memory", "ratio": 0.6}}}`,
	}}); err != nil {
		t.Fatal(err)
	}

	// caldera-controller-manager (it makes the default queues).
	cm := cmoptions.NewOptions(cmapp.ControllerNames())
	cm.Kubeconfig = impersonating(t, "caldera-controller-manager")
	cm.LeaderElect, cm.LeaderElectionNamespace = true, ns
	cm.HealthProbeBindAddress, cm.MetricsBindAddress = "0", "0"
	cm.GracefulShutdown = 5 * time.Second
	cmc, err := component.Configure(cm)
	if err != nil {
		t.Fatal(err)
	}
	run(t, "controller manager", func(ctx context.Context) error { return cmapp.Run(ctx, cmc) })

	// caldera-scheduler.
	cfg, err := schedconfig.Load([]byte(strings.Replace(framework.SchedulerConfig, "leaderElection:\n  leaderElect: false\n",
		"leaderElection:\n  leaderElect: true\n  resourceNamespace: "+ns+"\n", 1)), profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientConnection.Kubeconfig = impersonating(t, "caldera-scheduler")
	run(t, "scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, &schedoptions.Config{Configuration: cfg}) })

	// caldera-webhook, as its Deployment runs it but on loopback.
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	wo := webhookoptions.NewOptions()
	wo.Kubeconfig = impersonating(t, "caldera-webhook")
	wo.BindAddress, wo.Port = "127.0.0.1", port
	wo.CertDir = filepath.Join(t.TempDir(), "certs")
	wo.URLBase = fmt.Sprintf("https://127.0.0.1:%d", port)
	wo.ExtraSANs = []string{"127.0.0.1"}
	wo.HealthProbeBindAddress = "0"
	wc, err := component.Configure(wo)
	if err != nil {
		t.Fatal(err)
	}
	run(t, "webhook", func(ctx context.Context) error { return webhookapp.Run(ctx, wc) })

	// caldera-agent on the node, reading a simulated idle node.
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cpu.stat"), []byte("usage_usec 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	meminfo := filepath.Join(root, "meminfo")
	if err := os.WriteFile(meminfo, []byte("MemTotal: 67108864 kB\nMemAvailable: 67108864 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ao := agentoptions.NewOptions()
	ao.Kubeconfig = impersonating(t, "caldera-agent")
	ao.NodeName, ao.Namespace = node.Name, ns
	ao.CgroupRoot, ao.CgroupDriver, ao.MemInfo = root, "cgroupfs", meminfo
	ao.Interval, ao.MetricsBindAddress, ao.HealthProbeBindAddress = 500*time.Millisecond, "0", "0"
	ac, err := component.Configure(ao)
	if err != nil {
		t.Fatal(err)
	}
	run(t, "agent", func(ctx context.Context) error { return agentapp.Run(ctx, ac) })

	// The Leases, in caldera-system.
	poll.Eventually(t, t.Context(), time.Minute, "both Leases held in caldera-system", func() (bool, string) {
		held := 0
		for _, name := range []string{"caldera-scheduler", "caldera-controller-manager"} {
			var l coordinationv1.Lease
			if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &l); err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
				held++
			}
		}
		return held == 2, fmt.Sprint(held)
	})
	// The webhook registered itself and answers.
	poll.Eventually(t, t.Context(), time.Minute, "the webhook registered and refusing a job of no queue", func() (bool, string) {
		var mwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := fw.Client.Get(ctx, client.ObjectKey{Name: "caldera-webhook"}, &mwc); err != nil {
			return false, err.Error()
		}
		err := fw.Client.Create(ctx, gang("lost", "nowhere"), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "spec.queue"), fmt.Sprint(err)
	})
	// A gang runs.
	poll.Eventually(t, t.Context(), 30*time.Second, "the default queue", func() (bool, string) {
		err := fw.Client.Get(ctx, client.ObjectKey{Name: schedulingv1beta1.DefaultQueue}, &schedulingv1beta1.Queue{})
		return err == nil, fmt.Sprint(err)
	})
	if err := fw.Client.Create(ctx, gang("gang", "default")); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 90*time.Second, "the gang running", func() (bool, string) {
		var j batchv1alpha1.Job
		if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "gang"}, &j); err != nil {
			return false, err.Error()
		}
		return j.Status.State.Phase == batchv1alpha1.JobRunning && j.Status.Running == 2, fmt.Sprintf("%s, %d running", j.Status.State.Phase, j.Status.Running)
	})
	// The scheduler's status writes and events went through. The
	// PodGroup's Running is written once the scheduler sees the pods
	// started, which the job controller may see first.
	poll.Eventually(t, t.Context(), 30*time.Second, "the gang's PodGroup Running", func() (bool, string) {
		var pgs schedulingv1beta1.PodGroupList
		if err := fw.Client.List(ctx, &pgs, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		if len(pgs.Items) != 1 {
			return false, fmt.Sprintf("%d PodGroups", len(pgs.Items))
		}
		st := pgs.Items[0].Status
		return st.Phase == schedulingv1beta1.PodGroupRunning && st.Running == 2, fmt.Sprintf("%s, %d running", st.Phase, st.Running)
	})
	// The agent published the node's batch resources.
	poll.Eventually(t, t.Context(), 30*time.Second, "batch-cpu on the node", func() (bool, string) {
		var n corev1.Node
		if err := fw.Client.Get(ctx, client.ObjectKey{Name: node.Name}, &n); err != nil {
			return false, err.Error()
		}
		_, ok := n.Status.Allocatable[qos.BatchCPU]
		return ok, fmt.Sprint(n.Status.Allocatable)
	})
	if err := fw.Client.Delete(ctx, gang("gang", "default")); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

// gang is a Job of two 1-CPU pods placed together.
func gang(name, queue string) *batchv1alpha1.Job {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	return &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: batchv1alpha1.JobSpec{
		SchedulerName: "volcano", Queue: queue, MinAvailable: 2,
		Tasks: []batchv1alpha1.TaskSpec{{Name: "w", Replicas: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
		}}}},
	}}
}
