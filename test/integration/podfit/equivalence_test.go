//go:build integration

package podfit

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

const (
	ns      = "default"
	hostKey = corev1.LabelHostname
	// selectedNodeAnnotation is where kube-scheduler's VolumeBinding asks
	// for a delayed claim to be provisioned.
	selectedNodeAnnotation = "volume.kubernetes.io/selected-node"
)

// runningPods make the affinity, spread and port situations: web on n0
// (3 cpu, port 8080) and n3, db on n6 keeping app=batch pods off its host,
// and two members of a gang in zone a.
func runningPods() []*corev1.Pod {
	return []*corev1.Pod{
		st.MakePod(ns, "web-0").Label("app", "web").Req("cpu", "3").HostPort(8080).Node("n0").Obj(),
		st.MakePod(ns, "web-1").Label("app", "web").Req("cpu", "1").Node("n3").Obj(),
		st.MakePod(ns, "db-0").Label("app", "db").Req("cpu", "1").PodAntiAffinity(hostKey, "app", "batch").Node("n6").Obj(),
		st.MakePod(ns, "gang-0").Label("app", "gang").Req("cpu", "500m").Node("n0").Obj(),
		st.MakePod(ns, "gang-1").Label("app", "gang").Req("cpu", "500m").Node("n1").Obj(),
	}
}

// podSpec is one row of the matrix. claim names the pod's claim, which
// each kube-scheduler trial copies.
type podSpec struct {
	name  string
	pod   *corev1.Pod
	claim string
	// nominationOnly: pinning by node affinity would change the answer.
	nominationOnly bool
}

// pinning is how a trial confines kube-scheduler to one node.
type pinning string

const (
	// byNodeAffinity adds a matchFields requirement on metadata.name to
	// every required node-selector term.
	byNodeAffinity pinning = "node-affinity"
	// byNomination creates the pod behind a scheduling gate, sets its
	// nominated node and lifts the gate: kube-scheduler tries a nominated
	// node first and takes it when it fits, else looks elsewhere. The pod
	// spec is left as is.
	byNomination pinning = "nomination"
)

func (s podSpec) pinnings() []pinning {
	if s.nominationOnly {
		return []pinning{byNomination}
	}
	return []pinning{byNodeAffinity, byNomination}
}

// matrix: every constraint kind, alone and combined. Pinning a trial with
// node affinity changes what topology spread counts under the default
// node-affinity policy (Honor): only the pinned node's domain is left, and
// kube-scheduler accepts nodes it would otherwise refuse. So spread rows
// either ignore node affinity when counting (nodeAffinityPolicy: Ignore),
// or keep the default and are pinned by nomination only. Every other row
// is tried both ways.
func matrix() []podSpec {
	pod := func(name string) *st.PodWrapper { return st.MakePod(ns, name).Req("cpu", "100m") }
	dedicated := func(p *st.PodWrapper) *st.PodWrapper {
		return p.Toleration("dedicated", "gpu", corev1.TaintEffectNoSchedule)
	}
	return []podSpec{
		{name: "plain", pod: pod("plain").Obj()},
		{name: "cpu-3", pod: st.MakePod(ns, "cpu-3").Req("cpu", "3").Obj()},
		{name: "node-affinity", pod: pod("node-affinity").NodeAffinityIn("disk", "ssd").Obj()},
		{name: "node-selector-toleration", pod: dedicated(pod("node-selector-toleration").NodeSelector(zoneKey, "b")).Obj()},
		{name: "gpu", pod: dedicated(pod("gpu").Req(gpu, "1").Limit(gpu, "1")).Obj()},
		{name: "tolerate-all", pod: pod("tolerate-all").Toleration("", "", "").Obj()},
		{name: "pod-affinity", pod: pod("pod-affinity").PodAffinity(zoneKey, "app", "web").Obj()},
		{name: "pod-anti-affinity", pod: pod("pod-anti-affinity").PodAntiAffinity(hostKey, "app", "web").Obj()},
		{name: "existing-anti-affinity", pod: pod("existing-anti-affinity").Label("app", "batch").Obj()},
		{name: "spread-zone", pod: pod("spread-zone").Label("app", "gang").
			Spread(1, zoneKey, corev1.DoNotSchedule, "app", "gang").SpreadNodeAffinityPolicy(corev1.NodeInclusionPolicyIgnore).Obj()},
		{name: "spread-host", pod: pod("spread-host").Label("app", "gang").
			Spread(1, hostKey, corev1.DoNotSchedule, "app", "gang").SpreadNodeAffinityPolicy(corev1.NodeInclusionPolicyIgnore).Obj()},
		{name: "spread-zone-default-policy", nominationOnly: true, pod: pod("spread-zone-default-policy").Label("app", "gang").
			Spread(1, zoneKey, corev1.DoNotSchedule, "app", "gang").Obj()},
		{name: "host-port", pod: pod("host-port").HostPort(8080).Obj()},
		{name: "gang-member", pod: pod("gang-member").Label("app", "gang").PodAntiAffinity(hostKey, "app", "gang").
			NodeAffinityIn("disk", "ssd").Obj()},
		// Last: a trial that kube-scheduler accepts stays assumed in its
		// cache until its volume binding gives up on the deleted pod.
		{name: "wffc-claim", pod: pod("wffc-claim").Label("app", "storage").PVC("data").Obj(), claim: "data"},
	}
}

func storageObjects() (*st.StorageClassWrapper, *st.PVCWrapper) {
	return st.MakeStorageClass("zonal", "example.com/zonal").WaitForFirstConsumer().AllowedTopology(zoneKey, "b", "c"),
		st.MakePVC(ns, "data").StorageClass("zonal")
}

// testTimeout bounds TestFeasibleNodesMatchKubeScheduler, each of its
// waits included: they end with its context.
const testTimeout = 90 * time.Second

// TestFeasibleNodesMatchKubeScheduler checks, for each pod of the matrix,
// that the nodes the evaluator finds feasible are exactly the nodes the
// real kube-scheduler accepts the pod on, in the same cluster.
func TestFeasibleNodesMatchKubeScheduler(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cs, err := kubernetes.NewForConfig(fw.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	setUpCluster(t, ctx, cs)

	ours := feasibleByEvaluator(t, ctx, cs)

	ks, err := controlplane.StartKubeScheduler(ctx, fw.Cluster.APIServer, controlplane.KubeSchedulerOptions{
		BinDir: fw.BinDir, Dir: filepath.Join(fw.Dir, "kube-scheduler"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ks.Stop(); err != nil {
			t.Error(err)
		}
	}()
	nodes := nodeNames()
	for _, spec := range matrix() {
		for _, pin := range spec.pinnings() {
			t.Run(spec.name+"/"+string(pin), func(t *testing.T) {
				var theirs []string
				for _, node := range nodes {
					if acceptedOn(t, ctx, cs, spec, pin, node) {
						theirs = append(theirs, node)
					}
				}
				if diff := cmp.Diff(theirs, ours[spec.name]); diff != "" {
					t.Errorf("feasible nodes (-kube-scheduler,+podfit):\n%s", diff)
				}
				t.Logf("feasible: %v", theirs)
			})
		}
	}
}

func nodeNames() []string {
	var names []string
	for _, n := range clusterNodes() {
		names = append(names, n.Name)
	}
	return names
}

// setUpCluster cordons n4, starts the running pods and creates the
// storage class and claim of the matrix.
func setUpCluster(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "n4", types.StrategicMergePatchType,
		[]byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range runningPods() {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	class, claim := storageObjects()
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, class.Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim.Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, testTimeout, "running pods", func() (bool, string) {
		for _, p := range runningPods() {
			got, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if got.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("%s %s", p.Name, got.Status.Phase)
			}
		}
		return true, ""
	})
}

// feasibleByEvaluator asks the evaluator about every pod of the matrix.
func feasibleByEvaluator(t *testing.T, ctx context.Context, cs kubernetes.Interface) map[string][]string {
	t.Helper()
	e, nodes := newEvaluator(t, ctx, cs, podfit.Options{})
	out := map[string][]string{}
	for _, spec := range matrix() {
		fit, why := e.Feasible(ctx, spec.pod)
		out[spec.name] = fit
		for _, n := range nodes {
			if s := why[n.Name]; s != nil {
				t.Logf("%s: not %s: %s", spec.name, n.Name, s.Message())
			}
		}
	}
	return out
}

// newEvaluator builds an evaluator with o (its informer factory and client
// set from cs) and gives it the cluster's nodes and pods as the
// scheduler's cache does; it is closed when the test ends.
func newEvaluator(t *testing.T, ctx context.Context, cs kubernetes.Interface, o podfit.Options) (*podfit.Evaluator, []*api.NodeInfo) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(cs, 0)
	o.InformerFactory, o.ClientSet = factory, cs
	e, err := podfit.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	factory.Start(ctx.Done())
	t.Cleanup(factory.Shutdown)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	nodeList, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podList, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*api.NodeInfo{}
	var nodes []*api.NodeInfo
	for i := range nodeList.Items {
		n := api.NewNodeInfo(&nodeList.Items[i])
		byName[n.Name] = n
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b *api.NodeInfo) int { return strings.Compare(a.Name, b.Name) })
	for i := range podList.Items {
		p := &podList.Items[i]
		if n := byName[p.Spec.NodeName]; n != nil {
			n.AddTask(api.NewTaskInfo(p, api.NewJobID(p.Namespace, p.Name)))
		}
	}
	e.SetNodes(nodes)
	return e, nodes
}

// acceptedOn runs one kube-scheduler trial: a copy of the pod for
// default-scheduler, pinned to the node. It waits until kube-scheduler
// binds it (or, for a delayed claim, selects a node for the claim) or
// marks it Unschedulable; it was accepted on the node if that is where it
// went. Then it deletes the copy and its claim so that trials do not see
// each other.
func acceptedOn(t *testing.T, ctx context.Context, cs kubernetes.Interface, spec podSpec, pin pinning, node string) bool {
	t.Helper()
	name := spec.name + "-" + node
	var pod *corev1.Pod
	if pin == byNomination {
		pod = gated(spec.pod, name)
	} else {
		pod = pinned(spec.pod, name, node)
	}
	var claim string
	if spec.claim != "" {
		claim = spec.claim + "-" + node
		_, c := storageObjects()
		c.Name = claim
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, c.Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range pod.Spec.Volumes {
			if v := pod.Spec.Volumes[i].PersistentVolumeClaim; v != nil && v.ClaimName == spec.claim {
				v.ClaimName = claim
			}
		}
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if pin == byNomination {
		nominate(t, ctx, cs, name, node)
	}
	var accepted bool
	poll.Eventually(t, ctx, testTimeout, "kube-scheduler's decision on "+name, func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			accepted = p.Spec.NodeName == node
			return true, ""
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				// The claim was created just before the pod: a scheduler
				// whose informer has not seen it yet says it is missing,
				// and tries again once it sees it. Not a decision.
				if claim != "" && strings.Contains(c.Message, "persistentvolumeclaim") && strings.Contains(c.Message, "not found") {
					return false, c.Message
				}
				return true, ""
			}
		}
		if claim != "" {
			c, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
			if err == nil && c.Annotations[selectedNodeAnnotation] != "" {
				accepted = c.Annotations[selectedNodeAnnotation] == node
				return true, ""
			}
		}
		return false, "neither bound nor unschedulable"
	})
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, name, now); err != nil {
		t.Fatal(err)
	}
	if claim != "" {
		// Nothing runs the claim-protection controller here: drop its
		// finalizer so that the claim goes at once.
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, claim, types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, now); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, ctx, testTimeout, "deletion of "+name, func() (bool, string) {
		if _, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("the pod is there (err %v)", err)
		}
		if claim == "" {
			return true, ""
		}
		_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the claim is there (err %v)", err)
	})
	return accepted
}

// pinned returns a copy of the pod for kube-scheduler, allowed on node only.
func pinned(orig *corev1.Pod, name, node string) *corev1.Pod {
	p := orig.DeepCopy()
	p.Name = name
	p.UID = ""
	p.Spec.SchedulerName = corev1.DefaultSchedulerName
	onNode := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := p.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range terms {
		terms[i].MatchFields = append(terms[i].MatchFields, onNode)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
	return p
}

const trialGate = "caldera.sh/equivalence-trial"

// gated returns a copy of the pod for kube-scheduler, held back by a
// scheduling gate.
func gated(orig *corev1.Pod, name string) *corev1.Pod {
	p := orig.DeepCopy()
	p.Name = name
	p.UID = ""
	p.Spec.SchedulerName = corev1.DefaultSchedulerName
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: trialGate})
	return p
}

// nominate sets the gated pod's nominated node, then lifts the gate.
func nominate(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, node string) {
	t.Helper()
	status := fmt.Sprintf(`{"status":{"nominatedNodeName":%q}}`, node)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"spec":{"schedulingGates":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
