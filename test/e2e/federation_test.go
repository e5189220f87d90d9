//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/localenv"
	"github.com/caldera-sh/caldera/test/fedenv"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestFederation: an API server plays the Karmada control plane (the
// mirror's CRDs, caldera-global, and a stand-in for Karmada's own
// controllers); two members run kwok nodes (two of 4 CPUs each) and
// Caldera's scheduler and controller manager. Three 2-CPU Jobs go to a
// queue capped at 4 CPUs across the federation: two run in the members,
// the third waits with a reason; with member-b NotReady and the cap
// raised, the third runs, in member-a.
func TestFederation(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := startFederation(t, ctx, 0, "capped")
	kc, kp := f.karmada, f.cluster

	const ns = "training"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	capped := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "capped"},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Capability: corev1.ResourceList{corev1.ResourceCPU: cpus(4)}}}
	if err := kc.Create(ctx, capped); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, jobPolicy(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := kc.Create(ctx, trainingJob(ns, fmt.Sprintf("train-%d", i), "capped", 2)); err != nil {
			t.Fatal(err)
		}
	}

	// Two run, in the members; the third waits in its queue.
	where := func() map[string]string { return f.running(t, ctx, ns) }
	poll.Eventually(t, ctx, 3*time.Minute, "two of the three jobs running in members", func() (bool, string) {
		w := where()
		_, third := w["train-2"]
		return len(w) == 2 && !third, fmt.Sprintf("running %v", w)
	})
	cs := kubernetes.NewForConfigOrDie(kp.RESTConfig())
	poll.Eventually(t, ctx, time.Minute, "the third job told why it waits", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=train-2,reason=QueueCapability"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		return strings.Contains(evs.Items[0].Message, `queue "capped" would hold cpu 6, over its capability by cpu 2`), evs.Items[0].Message
	})

	// The dashboard's federation page shows both members Ready and the
	// third job held, with caldera-global's reason.
	dashboard := startDashboard(t, ctx, f, "member-a")
	// heldOnPage returns the namespace's held jobs, and how many members
	// are shown Ready; nil when the page is not there.
	heldOnPage := func() (map[string]string, int, string) {
		p, err := federationPage(ctx, dashboard)
		if err != nil {
			return nil, 0, err.Error()
		}
		ready, held := 0, map[string]string{}
		for _, m := range p.Members {
			if m.Ready {
				ready++
			}
		}
		for _, b := range p.Held {
			if b.Namespace == ns {
				held[b.Workload] = fmt.Sprintf("queue %s, held since %v, %s: %s", b.Queue, b.HeldSince, b.Rule, b.Reason)
			}
		}
		if !p.Enabled || len(p.Members) != 2 {
			return nil, 0, fmt.Sprintf("enabled %v, members %+v", p.Enabled, p.Members)
		}
		return held, ready, fmt.Sprintf("%d members Ready, placed %d, held %v", ready, p.Placed, held)
	}
	poll.Eventually(t, ctx, time.Minute, "the dashboard showing train-2 held by its queue's capability", func() (bool, string) {
		held, ready, state := heldOnPage()
		why := held["train-2"]
		return ready == 2 && len(held) == 1 && strings.HasPrefix(why, "queue capped, held since 20") &&
			strings.HasSuffix(why, `QueueCapability: queue "capped" would hold cpu 6, over its capability by cpu 2`), state
	})

	// member-b goes NotReady; the cap is raised: the third job runs, and
	// only where it may.
	setReady(t, ctx, f, false, "member-b")
	patched := capped.DeepCopy()
	patched.Spec.Capability[corev1.ResourceCPU] = cpus(100)
	if err := kc.Patch(ctx, patched, client.MergeFrom(capped)); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, "the third job running in member-a", func() (bool, string) {
		w := where()
		return w["train-2"] == "member-a", fmt.Sprintf("running %v", w)
	})
	poll.Eventually(t, ctx, time.Minute, "the dashboard showing nothing held", func() (bool, string) {
		held, ready, state := heldOnPage()
		return held != nil && len(held) == 0 && ready == 1, state
	})
	var rb workv1alpha2.ResourceBinding
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "train-2-job"}, &rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name != "member-a" {
		t.Errorf("train-2's binding placed on %v, want member-a", rb.Spec.Clusters)
	}
	setReady(t, ctx, f, true, "member-b")
}

// TestFederationFairShare: queues gold and silver, weights 2 and 1, each
// with more 1-CPU Jobs than the federation's 16 CPUs hold, all waiting
// when the members come up: the members run them 2:1, every CPU used.
func TestFederationFairShare(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	// Karmada asks for the Job's tasks as components here, as with its
	// MultiplePodTemplatesScheduling gate on.
	f := startFederationWith(t, ctx, federationOptions{components: true}, "gold", "silver")
	kc := f.karmada
	const ns = "shares"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for q, w := range map[string]int32{"gold": 2, "silver": 1} {
		if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: q}, Spec: schedulingv1beta1.QueueSpec{Weight: w}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := kc.Create(ctx, jobPolicy(ns)); err != nil {
		t.Fatal(err)
	}
	// Contention: every job is waiting before any room is offered, so the
	// members report NotReady until all the bindings exist.
	setReady(t, ctx, f, false)
	for i := range 20 {
		for _, q := range []string{"gold", "silver"} {
			if err := kc.Create(ctx, trainingJob(ns, fmt.Sprintf("%s-%02d", q, i), q, 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	bindingsHeld(t, ctx, f, ns, 40)
	setReady(t, ctx, f, true)
	var counts map[string]int
	poll.Eventually(t, ctx, 3*time.Minute, "16 jobs running", func() (bool, string) {
		counts = map[string]int{}
		for job := range f.running(t, ctx, ns) {
			counts[strings.SplitN(job, "-", 2)[0]]++
		}
		return counts["gold"]+counts["silver"] == 16, fmt.Sprintf("running %v", counts)
	})
	// 2:1 of 16 is 10.7:5.3.
	if g := counts["gold"]; g < 10 || g > 11 {
		t.Errorf("running %v, want gold:silver about 2:1 (10 or 11 gold)", counts)
	}
	// Settled: dispatch decisions made after the 16 ran hold the other
	// 24 jobs, so no more can reach the members, and 16 still run. The
	// second decision from now began after now; the first may not have.
	f.decisionsSince(t, ctx, 2)
	if held := f.held(t, ctx, ns); len(held) != 24 {
		t.Errorf("%d bindings held after settling, want 24 (no more released than the federation holds)", len(held))
	}
	if n := len(f.running(t, ctx, ns)); n != 16 {
		t.Errorf("%d jobs running after settling, want 16 (no more than the federation holds)", n)
	}
}

// gpuModelLabel tells the members' GPU models apart: member-a has two
// nodes of A100s, member-b a node of H100s and one of A100s.
const gpuModelLabel = "nvidia.com/gpu.product"

var nodeModels = map[string][]string{"member-a": {"A100", "A100"}, "member-b": {"H100", "A100"}}

// federation is a running control plane and its members.
type federation struct {
	karmada client.Client
	cluster *controlplane.Cluster
	members map[string]client.Client
	// memberEnvs are the members' local environments.
	memberEnvs map[string]*localenv.Environment
	plane      karmadaPlane
	// globalMetrics is the address of caldera-global's metrics (HTTPS),
	// and metricsToken a bearer token that may read them.
	globalMetrics, metricsToken string
}

// karmadaPlane is what does Karmada's part of a federation: the stand-in
// (test/e2e, in make test), or a real Karmada built from its source (the
// opt-in tier, make test-karmada).
type karmadaPlane interface {
	Name() string
	// SetReady makes Karmada report the member Ready or NotReady.
	SetReady(ctx context.Context, member string, ready bool) error
	// RestartControllers restarts Karmada's controllers; their detector
	// re-applies every policy as it starts.
	RestartControllers(ctx context.Context) error
	// Unapplied lists what Karmada propagates but its members refuse
	// (kind/name in member: message); nil for the stand-in, which
	// propagates Jobs only.
	Unapplied(ctx context.Context) ([]string, error)
}

// federationOptions shape a federation.
type federationOptions struct {
	// starvationWait, when set, is caldera-global's.
	starvationWait time.Duration
	// components: Karmada asks for a Job's tasks as components (its
	// MultiplePodTemplatesScheduling gate) rather than one replica.
	components bool
	// global changes caldera-global's options.
	global func(*options.Options)
}

// startFederation starts a Karmada control plane (the stand-in, or a real
// Karmada when the real tier is asked for: see realKarmadaDir) with
// caldera-global, and two members, member-a and member-b, each of two kwok
// nodes of 4 CPUs and 64 GPUs (models by node label, as nodeModels says)
// with Caldera's scheduler and controller manager and the queues named.
// Each member's Cluster is in Push mode, naming the member's API server
// and a Secret with the token of a service account there that may list
// and watch nodes and pods, as karmadactl join sets it up. A starvation
// wait of 0 keeps caldera-global's default.
func startFederation(t *testing.T, ctx context.Context, starvationWait time.Duration, queues ...string) *federation {
	t.Helper()
	return startFederationWith(t, ctx, federationOptions{starvationWait: starvationWait}, queues...)
}

// startFederationWith is startFederation shaped by o.
func startFederationWith(t *testing.T, ctx context.Context, o federationOptions, queues ...string) *federation {
	t.Helper()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := testDir(t)

	// The members. With a real Karmada, Queues reach members from the
	// Karmada API server (deploy/global/karmada propagates them).
	memberQueues := queues
	if realKarmadaDir() != "" {
		memberQueues = nil
	}
	members := map[string]client.Client{}
	envs := map[string]*localenv.Environment{}
	access := map[string]fedenv.MemberAccess{}
	for _, name := range []string{"member-a", "member-b"} {
		var nodes []controlplane.NodeSpec
		for i := range 2 {
			nodes = append(nodes, controlplane.NodeSpec{Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{gpuModelLabel: nodeModels[name][i]}, Capacity: corev1.ResourceList{
				corev1.ResourceCPU: cpus(4), corev1.ResourceMemory: cpus(64 << 30), corev1.ResourcePods: cpus(110), gpu: cpus(64),
			}})
		}
		m := fedenv.StartMember(t, ctx, localenv.Options{
			BinDir: binDir, Dir: filepath.Join(dir, name), Nodes: nodes,
			Components: []string{localenv.ComponentScheduler, localenv.ComponentControllerManager},
		}, memberQueues)
		members[name], envs[name], access[name] = m.Client, m.Env, m.Access
	}

	change := func(g *options.Options) {
		if o.starvationWait > 0 {
			g.StarvationWait = o.starvationWait
		}
		if o.global != nil {
			o.global(g)
		}
	}
	if real := realKarmadaDir(); real != "" {
		return startRealFederation(t, ctx, real, binDir, dir, o, change, members, envs)
	}

	// The Karmada control plane, played by the stand-in.
	k := fedenv.StartKarmada(t, ctx, binDir, dir)
	kp, kc := k.Cluster, k.Cluster.Client
	standIn, err := fedenv.NewStandIn(kc, members, access, o.components)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopStandIn := context.WithCancel(ctx)
	t.Cleanup(stopStandIn)
	go standIn.Run(sctx)
	metrics := startGlobal(t, ctx, k.GlobalKubeconfig, kp.APIServer.Kubeconfig, filepath.Join(dir, "global-certs"), change)

	return &federation{karmada: kc, cluster: kp, members: members, memberEnvs: envs, plane: standIn,
		globalMetrics: metrics, metricsToken: fedenv.MetricsReaderToken(t, ctx, kc)}
}

// testDir is where a test's control planes keep their files and logs: a
// temporary folder, or one under CALDERA_E2E_DIR, kept after the test.
func testDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("CALDERA_E2E_DIR")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, t.Name())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("files and logs in %s", dir)
	return dir
}

// setReady makes Karmada report the members named (all when none are)
// Ready or NotReady, and waits until the control plane shows it.
func setReady(t *testing.T, ctx context.Context, f *federation, ready bool, names ...string) {
	t.Helper()
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(f.members))
	}
	for _, m := range names {
		if err := f.plane.SetReady(ctx, m, ready); err != nil {
			t.Fatal(err)
		}
	}
	want := metav1.ConditionFalse
	if ready {
		want = metav1.ConditionTrue
	}
	poll.Eventually(t, ctx, 3*time.Minute, fmt.Sprintf("%v Ready=%s", names, want), func() (bool, string) {
		n := 0
		for _, m := range names {
			var cl clusterv1alpha1.Cluster
			if err := f.karmada.Get(ctx, client.ObjectKey{Name: m}, &cl); err != nil {
				return false, err.Error()
			}
			if c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil && c.Status == want {
				n++
			}
		}
		return n == len(names), fmt.Sprintf("%d of %d", n, len(names))
	})
}

// running maps the Jobs of the namespace that run in a member to it.
func (f *federation) running(t *testing.T, ctx context.Context, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, mc := range f.members {
		var jobs batchv1alpha1.JobList
		if err := mc.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			if j.Status.State.Phase == batchv1alpha1.JobRunning {
				out[j.Name] = name
			}
		}
	}
	return out
}

// held names the namespace's bindings the dispatcher holds: suspended and
// placed in no member.
func (f *federation) held(t *testing.T, ctx context.Context, ns string) []string {
	t.Helper()
	var rbs workv1alpha2.ResourceBindingList
	if err := f.karmada.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rb := range rbs.Items {
		if rb.Spec.SchedulingSuspended() && len(rb.Spec.Clusters) == 0 {
			out = append(out, rb.Name)
		}
	}
	return out
}

// decisions is how many decisions caldera-global's dispatcher has made
// (caldera_global_decisions_total, every result).
func (f *federation) decisions(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.globalMetrics, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+f.metricsToken)
	// caldera-global's metrics certificate is self-signed.
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", f.globalMetrics, resp.Status)
	}
	n := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "caldera_global_decisions_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", f.globalMetrics, line, err)
		}
		n += v
	}
	return n, sc.Err()
}

// decisionsSince waits until the dispatcher has made n more decisions than
// it had when called. The first may have begun before the call, the
// others began after it; a decision is counted once what it released is
// in the bindings.
func (f *federation) decisionsSince(t *testing.T, ctx context.Context, n float64) {
	t.Helper()
	from, err := f.decisions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, 2*time.Minute, fmt.Sprintf("%v more dispatch decisions", n), func() (bool, string) {
		got, err := f.decisions(ctx)
		if err != nil {
			return false, err.Error()
		}
		return got >= from+n, fmt.Sprintf("%v decisions, want %v", got, from+n)
	})
}

// jobPolicy propagates the namespace's Jobs, each to one of the members.
func jobPolicy(ns string) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member-a", "member-b"}},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1}},
			},
		},
	}
}

// trainingJob is a Job of pods 1-CPU workers in the queue.
func trainingJob(ns, name, queue string, pods int32) *batchv1alpha1.Job {
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: "volcano", Queue: queue, MinAvailable: pods,
			Tasks: []batchv1alpha1.TaskSpec{{
				Name: "worker", Replicas: pods,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: cpus(1)},
					}}},
				}},
			}},
		},
	}
}

// startGlobal runs caldera-global in this process against the control
// plane, with the kubeconfig's identity, until the test ends, and returns
// once its webhook answers (asked as the administrator), with the address
// of its metrics.
func startGlobal(t *testing.T, ctx context.Context, kubeconfig, adminKubeconfig, certDir string, change func(*options.Options)) (metricsURL string) {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := options.NewOptions()
	o.Kubeconfig = kubeconfig
	o.BindAddress, o.Port = "127.0.0.1", port
	o.CertDir = certDir
	o.URLBase = fmt.Sprintf("https://127.0.0.1:%d", port)
	o.ExtraSANs = []string{"127.0.0.1"}
	o.HealthProbeBindAddress = "0"
	o.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", metricsPort)
	// Leader-elected, as deployed (the Lease in caldera-system).
	o.LeaderElect = true
	o.Heartbeat = time.Second
	// The stand-in refreshes member summaries every 200 ms.
	o.ReportGrace = time.Second
	change(o)
	gc, err := component.Configure(o)
	if err != nil {
		t.Fatal(err)
	}
	gctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	// exited: the wait below saw caldera-global end.
	exited := false
	go func() { done <- app.Run(gctx, gc) }()
	t.Cleanup(func() {
		cancel()
		if !exited {
			<-done
		}
	})
	c, err := fedenv.ClientFor(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	fedenv.WaitForSuspension(t, ctx, c, func() error {
		select {
		case err := <-done:
			exited = true
			return fmt.Errorf("caldera-global exited: %v", err)
		default:
			return nil
		}
	})
	return fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort)
}

// cpus is a quantity of whole CPUs.
func cpus(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
