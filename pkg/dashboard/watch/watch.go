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
	"k8s.io/apimachinery/pkg/fields"
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
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
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
	// Karmada, when set, is the user's config for the Karmada API server:
	// the watcher then also watches the member clusters, the
	// ResourceBindings and caldera-global's events there.
	Karmada *rest.Config
}

// Watcher is a dashboard source over informers.
type Watcher struct {
	member  *informers
	karmada *informers // nil without a Karmada API server
	reader  client.Reader
	scope   string
	changed chan struct{}
	ns      string
}

// informers are the informers of one API server, and what they leave out.
type informers struct {
	host    string
	cache   cache.Cache
	denied  map[string]string
	watched map[string]bool
}

// kind is a kind the dashboard shows.
type kind struct {
	name       string
	namespaced bool
	list       func() client.ObjectList
	// fields, when set, selects the objects watched.
	fields fields.Selector
}

var kinds = []kind{
	{"queues", false, func() client.ObjectList { return &schedulingv1beta1.QueueList{} }, nil},
	{"hypernodes", false, func() client.ObjectList { return &topologyv1alpha1.HyperNodeList{} }, nil},
	{"nodes", false, func() client.ObjectList { return &corev1.NodeList{} }, nil},
	{"jobs", true, func() client.ObjectList { return &batchv1alpha1.JobList{} }, nil},
	{"podgroups", true, func() client.ObjectList { return &schedulingv1beta1.PodGroupList{} }, nil},
	{"pods", true, func() client.ObjectList { return &corev1.PodList{} }, nil},
}

// karmadaKinds are what the federation page shows. Of the events, only
// those about Volcano Jobs: caldera-global says on a held Job why it
// holds it.
var karmadaKinds = []kind{
	{"clusters", false, func() client.ObjectList { return &clusterv1alpha1.ClusterList{} }, nil},
	{"resourcebindings", true, func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} }, nil},
	{"events", true, func() client.ObjectList { return &corev1.EventList{} }, fields.SelectorFromSet(fields.Set{
		"involvedObject.kind": "Job", "involvedObject.apiVersion": batchv1alpha1.SchemeGroupVersion.String(),
	})},
}

// karmadaScheme holds the kinds the dashboard reads from Karmada.
func karmadaScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := karmada.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
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
	w := &Watcher{reader: direct, changed: make(chan struct{}, 1), ns: o.Namespace}
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
	if w.member, err = w.start(ctx, cfg, o.Scheme, direct, kinds, w.ns); err != nil {
		return nil, err
	}
	if o.Karmada != nil {
		kcfg := ReadOnly(o.Karmada)
		ks, err := karmadaScheme()
		if err != nil {
			return nil, err
		}
		kdirect, err := client.New(kcfg, client.Options{Scheme: ks})
		if err != nil {
			return nil, fmt.Errorf("connecting to the Karmada API server: %w", err)
		}
		if w.karmada, err = w.start(ctx, kcfg, ks, kdirect, karmadaKinds, ""); err != nil {
			return nil, fmt.Errorf("the Karmada API server %s: %w", o.Karmada.Host, err)
		}
	}
	return w, nil
}

// start probes each kind, starts the informers of those the user may
// list, and waits for their first lists.
func (w *Watcher) start(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, direct client.Reader, kinds []kind, ns string) (*informers, error) {
	inf := &informers{host: cfg.Host, denied: map[string]string{}, watched: map[string]bool{}}
	copts := cache.Options{Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields(),
		// The model only reads the objects: no copy per list.
		DefaultUnsafeDisableDeepCopy: ptr.To(true), ByObject: map[client.Object]cache.ByObject{}}
	if ns != "" {
		copts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	var watched []client.Object
	for _, k := range kinds {
		kns := ""
		if k.namespaced {
			kns = ns
		}
		if err := probe(ctx, direct, k, kns); err != nil {
			if !apierrors.IsForbidden(err) && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("listing %s: %w", k.name, err)
			}
			inf.denied[k.name] = reason(err)
			continue
		}
		obj, err := objectOf(scheme, k.list())
		if err != nil {
			return nil, err
		}
		if k.fields != nil {
			copts.ByObject[obj] = cache.ByObject{Field: k.fields}
		}
		watched = append(watched, obj)
		inf.watched[k.name] = true
	}
	var err error
	if inf.cache, err = cache.New(cfg, copts); err != nil {
		return nil, fmt.Errorf("making the informers: %w", err)
	}
	notify := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.notify() },
		UpdateFunc: func(any, any) { w.notify() },
		DeleteFunc: func(any) { w.notify() },
	}
	for _, obj := range watched {
		i, err := inf.cache.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := i.AddEventHandler(notify); err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	go func() {
		if err := inf.cache.Start(ctx); err != nil {
			klog.ErrorS(err, "The dashboard's informers stopped", "server", cfg.Host)
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !inf.cache.WaitForCacheSync(syncCtx) {
		return nil, errors.New("the informers did not list their objects within 2 minutes")
	}
	return inf, nil
}

// probe lists one object of the kind, to learn whether the user may.
func probe(ctx context.Context, c client.Reader, k kind, namespace string) error {
	opts := []client.ListOption{client.Limit(1)}
	if k.namespaced && namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if k.fields != nil {
		opts = append(opts, client.MatchingFieldsSelector{Selector: k.fields})
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
	m := w.member
	in := model.Input{Denied: m.denied}
	in.Queues = list[schedulingv1beta1.Queue](m, "queues", &schedulingv1beta1.QueueList{}, func(l *schedulingv1beta1.QueueList) []schedulingv1beta1.Queue { return l.Items })
	in.HyperNodes = list[topologyv1alpha1.HyperNode](m, "hypernodes", &topologyv1alpha1.HyperNodeList{}, func(l *topologyv1alpha1.HyperNodeList) []topologyv1alpha1.HyperNode { return l.Items })
	in.Nodes = list[corev1.Node](m, "nodes", &corev1.NodeList{}, func(l *corev1.NodeList) []corev1.Node { return l.Items })
	in.Jobs = list[batchv1alpha1.Job](m, "jobs", &batchv1alpha1.JobList{}, func(l *batchv1alpha1.JobList) []batchv1alpha1.Job { return l.Items })
	in.PodGroups = list[schedulingv1beta1.PodGroup](m, "podgroups", &schedulingv1beta1.PodGroupList{}, func(l *schedulingv1beta1.PodGroupList) []schedulingv1beta1.PodGroup { return l.Items })
	in.Pods = list[corev1.Pod](m, "pods", &corev1.PodList{}, func(l *corev1.PodList) []corev1.Pod { return l.Items })
	if k := w.karmada; k != nil {
		in.Federation = &model.FederationInput{Host: k.host, Denied: k.denied,
			Clusters: list[clusterv1alpha1.Cluster](k, "clusters", &clusterv1alpha1.ClusterList{}, func(l *clusterv1alpha1.ClusterList) []clusterv1alpha1.Cluster { return l.Items }),
			Bindings: list[workv1alpha2.ResourceBinding](k, "resourcebindings", &workv1alpha2.ResourceBindingList{}, func(l *workv1alpha2.ResourceBindingList) []workv1alpha2.ResourceBinding { return l.Items }),
			Events:   list[corev1.Event](k, "events", &corev1.EventList{}, func(l *corev1.EventList) []corev1.Event { return l.Items }),
		}
	}
	return in
}

// list returns what the informer of a watched kind holds (nil for a kind
// not watched).
func list[T any, L client.ObjectList](inf *informers, name string, l L, items func(L) []T) []*T {
	if !inf.watched[name] || inf.cache.List(context.Background(), l) != nil {
		return nil
	}
	return pointers(items(l))
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
