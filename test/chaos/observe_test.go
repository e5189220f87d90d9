//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// observer watches every pod from the start of the run and keeps what the
// invariants need that a single list cannot show: a pod's node over its
// life (bound once, never moved), and how long each gang has been partly
// bound.
type observer struct {
	c       client.Client
	pods    toolscache.Store
	grace   time.Duration
	mu      sync.Mutex
	node    map[types.UID]string
	bound   int
	partial map[string]time.Time
	// violations are what broke an invariant, each once.
	violations []string
	seen       map[string]bool
}

func startObserver(ctx context.Context, e *env, gangGrace time.Duration) (*observer, error) {
	o := &observer{c: e.client, grace: gangGrace, node: map[types.UID]string{}, partial: map[string]time.Time{}, seen: map[string]bool{}}
	f := informers.NewSharedInformerFactory(e.clientset, 0)
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.pod(obj) },
		UpdateFunc: func(_, obj any) { o.pod(obj) },
	}); err != nil {
		return nil, err
	}
	o.pods = inf.GetStore()
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the %v informer did not sync", typ)
		}
	}
	return o, nil
}

// pod records a pod's node: the first it is bound to, and a violation if
// it ever shows another.
func (o *observer) pod(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	was, known := o.node[p.UID]
	switch {
	case !known:
		o.node[p.UID] = p.Spec.NodeName
		o.bound++
	case was != p.Spec.NodeName:
		o.violate(fmt.Sprintf("pod %s/%s bound to %s, then to %s", p.Namespace, p.Name, was, p.Spec.NodeName))
	}
}

func (o *observer) violate(what string) {
	if !o.seen[what] {
		o.seen[what] = true
		o.violations = append(o.violations, what)
	}
}

// Violations returns what broke an invariant so far.
func (o *observer) Violations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.violations)
}

// Bound is how many pods were bound since the start.
func (o *observer) Bound() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bound
}

// livePods are the pods bound and holding their node: not finished, not
// being deleted.
func (o *observer) livePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range o.pods.List() {
		p := obj.(*corev1.Pod)
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

// checkGangs looks at every PodGroup: a gang with some but fewer than
// minMember of its pods bound is partly bound; one that stays so for
// longer than the grace breaks atomicity. Call it often (every second).
func (o *observer) checkGangs(ctx context.Context, now time.Time) error {
	var pgs schedulingv1beta1.PodGroupList
	if err := o.c.List(ctx, &pgs); err != nil {
		return err
	}
	// bound counts a gang's pods bound, finished ones included (a gang's
	// pods finish at different times); live those still running or about
	// to. A gang with none live holds nothing: a finished gang whose pods
	// are being deleted (its Job past its TTL) is not partly bound.
	bound, live := map[string]int32{}, map[string]bool{}
	for _, obj := range o.pods.List() {
		p := obj.(*corev1.Pod)
		g := p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]
		if g == "" || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			continue
		}
		bound[p.Namespace+"/"+g]++
		if p.Status.Phase != corev1.PodSucceeded {
			live[p.Namespace+"/"+g] = true
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	current := map[string]bool{}
	for _, pg := range pgs.Items {
		key := pg.Namespace + "/" + pg.Name
		b := bound[key]
		if b == 0 || b >= pg.Spec.MinMember || !live[key] {
			continue
		}
		current[key] = true
		since, ok := o.partial[key]
		if !ok {
			o.partial[key] = now
			continue
		}
		if now.Sub(since) > o.grace {
			o.violate(fmt.Sprintf("gang %s: %d of minMember %d bound for over %s", key, b, pg.Spec.MinMember, o.grace))
		}
	}
	for key := range o.partial {
		if !current[key] {
			delete(o.partial, key)
		}
	}
	return nil
}

// checkCapacity reports every node whose bound, live pods request more
// than it has.
func (o *observer) checkCapacity(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := o.c.List(ctx, &nodes); err != nil {
		return err
	}
	used := map[string]corev1.ResourceList{}
	for _, p := range o.livePods() {
		u := used[p.Spec.NodeName]
		if u == nil {
			u = corev1.ResourceList{}
			used[p.Spec.NodeName] = u
		}
		for _, c := range p.Spec.Containers {
			for name, q := range c.Resources.Requests {
				sum := u[name]
				sum.Add(q)
				u[name] = sum
			}
		}
		pods := u[corev1.ResourcePods]
		pods.Add(resource.MustParse("1"))
		u[corev1.ResourcePods] = pods
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range nodes.Items {
		for name, q := range used[n.Name] {
			if have, ok := n.Status.Allocatable[name]; ok && q.Cmp(have) > 0 {
				o.violate(fmt.Sprintf("node %s: pods request %s %s, it has %s", n.Name, q.String(), name, have.String()))
			}
		}
	}
	return nil
}

// queueAccounting compares each queue's status.allocated CPU with the CPU
// its live pods request; it returns the queues that differ, with both
// figures ("" when all agree).
func (o *observer) queueAccounting(ctx context.Context) (string, error) {
	var qs schedulingv1beta1.QueueList
	if err := o.c.List(ctx, &qs); err != nil {
		return "", err
	}
	var pgs schedulingv1beta1.PodGroupList
	if err := o.c.List(ctx, &pgs); err != nil {
		return "", err
	}
	queueOf := map[string]string{}
	for _, pg := range pgs.Items {
		queueOf[pg.Namespace+"/"+pg.Name] = pg.Spec.Queue
	}
	want := map[string]int64{}
	for _, p := range o.livePods() {
		q := queueOf[p.Namespace+"/"+p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]
		for _, c := range p.Spec.Containers {
			want[q] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	var diffs []string
	for _, q := range qs.Items {
		// A parent's allocation is its children's; leaves are compared.
		if q.Name == schedulingv1beta1.RootQueue {
			continue
		}
		got := q.Status.Allocated.Cpu().MilliValue()
		if isParent(q.Name, qs.Items) {
			continue
		}
		if got != want[q.Name] {
			diffs = append(diffs, fmt.Sprintf("%s allocated %dm, its bound pods request %dm (its pods: %s)", q.Name, got, want[q.Name], o.podStates(q.Name, queueOf)))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; "), nil
}

func isParent(name string, qs []schedulingv1beta1.Queue) bool {
	for _, q := range qs {
		if q.Spec.Parent == name {
			return true
		}
	}
	return false
}

// podStates counts a queue's pods by phase, whether bound and whether being
// deleted, for a report.
func (o *observer) podStates(queue string, queueOf map[string]string) string {
	count := map[string]int{}
	for _, obj := range o.pods.List() {
		p := obj.(*corev1.Pod)
		if queueOf[p.Namespace+"/"+p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]] != queue {
			continue
		}
		k := string(p.Status.Phase)
		if p.Spec.NodeName != "" {
			k += "/bound"
		}
		if p.DeletionTimestamp != nil {
			k += "/deleting"
		}
		count[k]++
	}
	var out []string
	for k, n := range count {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
