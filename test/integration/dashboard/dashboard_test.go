//go:build integration

package dashboard

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchtesting "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/dashboard/model"
	"github.com/caldera-sh/caldera/pkg/dashboard/server"
	"github.com/caldera-sh/caldera/pkg/dashboard/watch"
)

// workload makes, for a test of its own prefix, a queue with a child, a
// namespace, a job that runs in the child and one too large for any node
// that waits, and returns the namespace.
func workload(t *testing.T, prefix string) string {
	t.Helper()
	ctx := t.Context()
	c := fw.Client
	ns := prefix
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	parent := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-research"}}
	parent.Spec.Deserved = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")}
	parent.Spec.Capability = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24")}
	child := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-team"}}
	child.Spec.Parent = parent.Name
	child.Spec.Deserved = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
	child.Spec.Guarantee.Resource = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	for _, q := range []*schedulingv1beta1.Queue{parent, child} {
		schedulingv1beta1.SetDefaults_Queue(q)
		if err := c.Create(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	runs := batchtesting.MakeJob("train", ns).Queue(child.Name).MinAvailable(2).
		Task(batchtesting.MakeTask("worker", 2).CPURequest("1500m")).Obj()
	waits := batchtesting.MakeJob("too-big", ns).Queue(child.Name).MinAvailable(2).
		Task(batchtesting.MakeTask("worker", 2).CPURequest("40")).Obj()
	for _, j := range []*batchv1alpha1.Job{runs, waits} {
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// queueDiff compares the dashboard's queue rows with the Queue objects:
// "" when every number of every named queue is the API's.
func queueDiff(t *testing.T, rows []model.Queue, names ...string) string {
	t.Helper()
	shown := map[string]map[string]model.QueueResource{}
	for _, q := range rows {
		shown[q.Name] = map[string]model.QueueResource{}
		for _, r := range q.Resources {
			shown[q.Name][r.Resource] = r
		}
	}
	var diffs []string
	for _, name := range names {
		q := &schedulingv1beta1.Queue{}
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, q); err != nil {
			t.Fatal(err)
		}
		if shown[name] == nil {
			diffs = append(diffs, "queue "+name+" not shown")
			continue
		}
		check := func(field string, rl corev1.ResourceList, got func(model.QueueResource) string) {
			for r, want := range rl {
				if g := got(shown[name][string(r)]); g != want.String() {
					diffs = append(diffs, fmt.Sprintf("%s %s %s: shown %q, the API says %q", name, r, field, g, want.String()))
				}
			}
		}
		check("allocated", q.Status.Allocated, func(r model.QueueResource) string { return r.Allocated })
		check("deserved", q.Spec.Deserved, func(r model.QueueResource) string { return r.Deserved })
		check("guarantee", q.Spec.Guarantee.Resource, func(r model.QueueResource) string { return r.Guarantee })
		check("capability", q.Spec.Capability, func(r model.QueueResource) string { return r.Capability })
	}
	return strings.Join(diffs, "; ")
}

func TestDashboardShowsWhatTheAPISays(t *testing.T) {
	ns := workload(t, "dash")
	hn := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "dash-leaf"}}
	hn.Spec.Tier = 1
	for _, n := range []string{"n0", "n1"} {
		hn.Spec.Members = append(hn.Spec.Members, topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}})
	}
	if err := fw.Client.Create(t.Context(), hn); err != nil {
		t.Fatal(err)
	}
	base := dashboard(t, fw.Kubeconfig())

	var jobs server.JobsAnswer
	eventually(t, time.Minute, "train running and too-big waiting with a reason", func() string {
		get(t, base, "/api/jobs?namespace="+ns, &jobs)
		by := map[string]model.Job{}
		for _, j := range jobs.Items {
			by[j.Name] = j
		}
		if by["train"].Phase != "Running" || by["train"].Pods.Running != 2 || by["too-big"].Waiting == "" {
			return fmt.Sprintf("%+v", jobs.Items)
		}
		return ""
	})

	var queues server.Versioned[[]model.Queue]
	eventually(t, 30*time.Second, "the queue numbers are the API's", func() string {
		get(t, base, "/api/queues", &queues)
		return queueDiff(t, queues.Items, "dash-research", "dash-team")
	})
	for _, q := range queues.Items {
		if q.Name == "dash-team" && (q.Parent != "dash-research" || q.Depth != 2 || q.Jobs != 2) {
			t.Errorf("dash-team row: parent %q depth %d jobs %d, want dash-research, 2 (under root), 2", q.Parent, q.Depth, q.Jobs)
		}
	}

	var job server.JobAnswer
	get(t, base, "/api/jobs/Job/"+ns+"/too-big", &job)
	text := strings.Join(job.Explanation, "\n")
	if !strings.Contains(text, "Job dash/too-big is") || !strings.Contains(text, "cpu") {
		t.Errorf("too-big's explanation does not say why it waits:\n%s", text)
	}
	if job.EventsError != "" {
		t.Errorf("events: %s", job.EventsError)
	}

	// Every pod of train is on the node the API says, with its queue.
	var pods corev1.PodList
	if err := fw.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{batchv1alpha1.JobNameKey: "train"}); err != nil {
		t.Fatal(err)
	}
	var nodes server.NodesAnswer
	get(t, base, "/api/nodes", &nodes)
	onNode := map[string]model.NodePod{}
	for _, n := range nodes.Items {
		for _, p := range n.Pods {
			onNode[n.Name+"/"+p.Namespace+"/"+p.Name] = p
		}
	}
	for _, p := range pods.Items {
		if got, ok := onNode[p.Spec.NodeName+"/"+ns+"/"+p.Name]; !ok || got.Queue != "dash-team" {
			t.Errorf("pod %s on %s: shown %+v (found %v)", p.Name, p.Spec.NodeName, got, ok)
		}
	}

	var hns server.Versioned[[]model.HyperNode]
	get(t, base, "/api/hypernodes", &hns)
	if i := slices.IndexFunc(hns.Items, func(h model.HyperNode) bool { return h.Name == "dash-leaf" }); i < 0 || hns.Items[i].Nodes != 2 || hns.Items[i].ReadyNodes != 2 {
		t.Errorf("HyperNodes: %+v, want dash-leaf with 2 ready nodes", hns.Items)
	}
}

// A user sees what RBAC lets them list, and the dashboard says what it
// leaves out and why; nothing it does writes.
func TestDashboardShowsWhatTheUserMayList(t *testing.T) {
	ctx := t.Context()
	mine := workload(t, "alice")
	theirs := workload(t, "bob")
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{batchv1alpha1.GroupName}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{schedulingv1beta1.GroupName}, Resources: []string{"podgroups"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
	}
	for _, o := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: mine}, Rules: rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reader", Namespace: mine},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "alice-queues"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{schedulingv1beta1.GroupName}, Resources: []string{"queues"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-queues"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "alice-queues"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}},
	} {
		if err := fw.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// Alice's kubeconfig names her namespace, as a team's usually does.
	kubeconfig := filepath.Join(t.TempDir(), "alice.kubeconfig")
	if err := fw.Cluster.APIServer.KubeconfigFor("alice", kubeconfig); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc.Contexts[kc.CurrentContext].Namespace = mine
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	base := dashboard(t, kubeconfig)

	var sum server.Summary
	get(t, base, "/api/summary", &sum)
	if sum.Scope != "namespace "+mine {
		t.Errorf("scope %q, want namespace %s", sum.Scope, mine)
	}
	for _, kind := range []string{"nodes", "hypernodes"} {
		if !strings.Contains(sum.Denied[kind], "you may not list them") {
			t.Errorf("denied %s: %q", kind, sum.Denied[kind])
		}
	}
	if _, ok := sum.Denied["queues"]; ok {
		t.Errorf("queues denied: %q", sum.Denied["queues"])
	}
	var jobs server.JobsAnswer
	eventually(t, 30*time.Second, "alice's jobs listed", func() string {
		get(t, base, "/api/jobs", &jobs)
		if jobs.Total != 2 {
			return fmt.Sprintf("%d rows: %+v", jobs.Total, jobs.Items)
		}
		return ""
	})
	for _, j := range jobs.Items {
		if j.Namespace != mine {
			t.Errorf("alice sees %s/%s of %s", j.Namespace, j.Name, theirs)
		}
	}
	var job server.JobAnswer
	get(t, base, "/api/jobs/Job/"+mine+"/too-big", &job)
	if job.EventsError != "" || len(job.Explanation) == 0 {
		t.Errorf("alice's too-big: events error %q, explanation %q", job.EventsError, job.Explanation)
	}

	// The dashboard's connection refuses to write before the API server
	// is asked, even where alice could.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := client.New(watch.ReadOnly(cfg), client.Options{Scheme: fw.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	err = ro.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: mine}})
	if err == nil || !strings.Contains(err.Error(), "the dashboard only reads: POST") {
		t.Errorf("create through the dashboard's connection: %v", err)
	}
}
