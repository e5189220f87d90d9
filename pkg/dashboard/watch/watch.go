// Package watch feeds the dashboard: it watches the objects the dashboard
// shows through informers, with the user's own credentials and nothing but
// get, list and watch, and hands the server a snapshot of them.
//
// What the user may not list is not shown, and the dashboard says why: a
// user who may not list jobs in every namespace sees the jobs of one
// namespace (the kubeconfig's, or --namespace), and a kind the API server
// does not serve (HyperNodes where their CRD is not installed) is named as
// such.
package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/dashboard/model"
)

// Options say what to watch, and as whom.
type Options struct {
	// Config is the user's; the watcher wraps it so that it only reads.
	Config *rest.Config
	Scheme *runtime.Scheme
	// Namespace limits the namespaced kinds to one namespace; "" watches
	// every namespace when the user may list them there, else Fallback.
	Namespace string
	Fallback  string
}

// Watcher is a dashboard source over informers.
type Watcher struct {
	cache   cache.Cache
	reader  client.Reader
	scope   string
	denied  map[string]string
	watched map[string]bool
	changed chan struct{}
	ns      string
}

// kind is a kind the dashboard shows.
type kind struct {
	name       string
	namespaced bool
	list       func() client.ObjectList
}

var kinds = []kind{
	{"queues", false, func() client.ObjectList { return &schedulingv1beta1.QueueList{} }},
	{"hypernodes", false, func() client.ObjectList { return &topologyv1alpha1.HyperNodeList{} }},
	{"nodes", false, func() client.ObjectList { return &corev1.NodeList{} }},
	{"jobs", true, func() client.ObjectList { return &batchv1alpha1.JobList{} }},
	{"podgroups", true, func() client.ObjectList { return &schedulingv1beta1.PodGroupList{} }},
	{"pods", true, func() client.ObjectList { return &corev1.PodList{} }},
}

// ReadOnly wraps a config so that every request it makes other than GET
// fails before it leaves the process.
func ReadOnly(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readOnly{rt} })
	return out
}

type readOnly struct{ next http.RoundTripper }

func (r readOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("the dashboard only reads: %s %s refused", req.Method, req.URL.Path)
	}
	return r.next.RoundTrip(req)
}

// Start finds what the user may list, starts the informers and waits for
// their first lists.
func Start(ctx context.Context, o Options) (*Watcher, error) {
	cfg := ReadOnly(o.Config)
	direct, err := client.New(cfg, client.Options{Scheme: o.Scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	w := &Watcher{reader: direct, denied: map[string]string{}, watched: map[string]bool{}, changed: make(chan struct{}, 1), ns: o.Namespace}
	if w.ns == "" {
		for _, k := range kinds {
			if !k.namespaced {
				continue
			}
			if err := probe(ctx, direct, k, ""); apierrors.IsForbidden(err) {
				w.ns = o.Fallback
				break
			}
		}
	}
	w.scope = "all namespaces"
	if w.ns != "" {
		w.scope = "namespace " + w.ns
	}
	copts := cache.Options{Scheme: o.Scheme, DefaultTransform: cache.TransformStripManagedFields(),
		// The model only reads the objects: no copy per list.
		DefaultUnsafeDisableDeepCopy: ptr.To(true)}
	if w.ns != "" {
		copts.DefaultNamespaces = map[string]cache.Config{w.ns: {}}
	}
	if w.cache, err = cache.New(cfg, copts); err != nil {
		return nil, fmt.Errorf("making the informers: %w", err)
	}
	notify := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.notify() },
		UpdateFunc: func(any, any) { w.notify() },
		DeleteFunc: func(any) { w.notify() },
	}
	for _, k := range kinds {
		ns := ""
		if k.namespaced {
			ns = w.ns
		}
		if err := probe(ctx, direct, k, ns); err != nil {
			if !apierrors.IsForbidden(err) && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("listing %s: %w", k.name, err)
			}
			w.denied[k.name] = reason(err)
			continue
		}
		obj, err := objectOf(o.Scheme, k.list())
		if err != nil {
			return nil, err
		}
		inf, err := w.cache.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", k.name, err)
		}
		if _, err := inf.AddEventHandler(notify); err != nil {
			return nil, fmt.Errorf("watching %s: %w", k.name, err)
		}
		w.watched[k.name] = true
	}
	go func() {
		if err := w.cache.Start(ctx); err != nil {
			klog.ErrorS(err, "The dashboard's informers stopped")
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !w.cache.WaitForCacheSync(syncCtx) {
		return nil, errors.New("the informers did not list their objects within 2 minutes")
	}
	return w, nil
}

// probe lists one object of the kind, to learn whether the user may.
func probe(ctx context.Context, c client.Reader, k kind, namespace string) error {
	opts := []client.ListOption{client.Limit(1)}
	if k.namespaced && namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	return c.List(ctx, k.list(), opts...)
}

func reason(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "you may not list them: " + err.Error()
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		return "the API server does not serve them (is the CRD installed?)"
	}
	return err.Error()
}

// objectOf is the object of a list's items.
func objectOf(s *runtime.Scheme, list client.ObjectList) (client.Object, error) {
	gvks, _, err := s.ObjectKinds(list)
	if err != nil {
		return nil, err
	}
	gvk := gvks[0]
	gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	o, err := s.New(gvk)
	if err != nil {
		return nil, err
	}
	return o.(client.Object), nil
}

func (w *Watcher) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Changed receives after the objects change.
func (w *Watcher) Changed() <-chan struct{} { return w.changed }

// Scope says which namespaces the jobs and pods come from.
func (w *Watcher) Scope() string { return w.scope }

// Snapshot returns the objects the informers hold.
func (w *Watcher) Snapshot() model.Input {
	ctx := context.Background()
	in := model.Input{Denied: w.denied}
	if w.watched["queues"] {
		var l schedulingv1beta1.QueueList
		if w.cache.List(ctx, &l) == nil {
			in.Queues = pointers(l.Items)
		}
	}
	if w.watched["hypernodes"] {
		var l topologyv1alpha1.HyperNodeList
		if w.cache.List(ctx, &l) == nil {
			in.HyperNodes = pointers(l.Items)
		}
	}
	if w.watched["nodes"] {
		var l corev1.NodeList
		if w.cache.List(ctx, &l) == nil {
			in.Nodes = pointers(l.Items)
		}
	}
	if w.watched["jobs"] {
		var l batchv1alpha1.JobList
		if w.cache.List(ctx, &l) == nil {
			in.Jobs = pointers(l.Items)
		}
	}
	if w.watched["podgroups"] {
		var l schedulingv1beta1.PodGroupList
		if w.cache.List(ctx, &l) == nil {
			in.PodGroups = pointers(l.Items)
		}
	}
	if w.watched["pods"] {
		var l corev1.PodList
		if w.cache.List(ctx, &l) == nil {
			in.Pods = pointers(l.Items)
		}
	}
	return in
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Events lists the namespace's events about the objects of the UIDs, read
// from the API server when asked: the dashboard does not watch events.
func (w *Watcher) Events(ctx context.Context, namespace string, uids []types.UID) ([]corev1.Event, error) {
	want := map[types.UID]bool{}
	for _, u := range uids {
		want[u] = true
	}
	var l corev1.EventList
	if err := w.reader.List(ctx, &l, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing the events of namespace %s: %w", namespace, err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if want[e.InvolvedObject.UID] {
			out = append(out, e)
		}
	}
	return out, nil
}
