// Package agent is caldera-agent's loop on one node: every interval it
// reads the node's usage from the cgroup tree, publishes what online pods
// leave unused as kubernetes.io/batch-cpu and kubernetes.io/batch-memory,
// sets the pods' cgroups by their QoS classes, and evicts offline pods
// while the node is under pressure. The decisions are the pure packages
// beside it (config, qos, oversub, tune, evict); this package reads the
// inputs and applies the results.
//
// It keeps no state that a restart loses harm by: what it publishes and
// writes is compared with what the node and the cgroup files already
// hold, and the taint that stops new offline pods is read back from the
// node.
package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/evict"
	"github.com/caldera-sh/caldera/pkg/agent/metrics"
	"github.com/caldera-sh/caldera/pkg/agent/oversub"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
	"github.com/caldera-sh/caldera/pkg/agent/tune"
	"github.com/caldera-sh/caldera/pkg/agent/usage"
)

// Node labels that switch colocation on, Volcano's (config reads them).
const (
	ColocationLabel       = config.ColocationLabel
	OverSubscriptionLabel = config.OverSubscriptionLabel
)

// EvictingTaint keeps new offline pods off a node under pressure; the
// agent's own pods tolerate it.
const EvictingTaint = "volcano.sh/offline-job-evicting"

// Options configure the agent.
type Options struct {
	// NodeName is the node the agent runs on.
	NodeName string
	// Namespace holds the colocation ConfigMap.
	Namespace string
	// Layout places the kubelet's cgroups.
	Layout cgroup.Layout
	// MemInfo is the node's /proc/meminfo.
	MemInfo string
	// Interval is the time between readings.
	Interval time.Duration
	// Resync is how often the batch resources are published even when
	// they moved by less than a tenth.
	Resync time.Duration
}

// Agent runs the loop on one node.
type Agent struct {
	opts     Options
	client   kubernetes.Interface
	recorder record.EventRecorder
	metrics  *metrics.Metrics
	clock    clock.WithTicker

	nodes      corelisters.NodeLister
	pods       corelisters.PodLister
	configMaps corelisters.ConfigMapLister
	synced     []cache.InformerSynced
	factories  []informers.SharedInformerFactory

	// conf is the last valid configuration, and confVersion the
	// ConfigMap's resourceVersion it came from (confLoaded: it came from
	// one).
	conf        *config.Configuration
	confVersion string
	confLoaded  bool
	// badVersion is the version of the ConfigMap last refused, so that a
	// refusal is reported once.
	badVersion string
	badSeen    bool

	// warned holds the pods told of an unknown QoS level.
	warned map[types.UID]bool

	cpu       cpuMeter
	usage     usageSmoothers
	pressure  evict.Pressure
	limiter   evict.Limiter
	published time.Time

	// usageReport publishes the node's NodeUsage; nil: not published.
	usageReport *usageReporter
}

// New builds an agent; Run starts it.
func New(client kubernetes.Interface, recorder record.EventRecorder, m *metrics.Metrics, clk clock.WithTicker, opts Options) *Agent {
	// What the node shows when the agent starts counts as just published:
	// a restart alone republishes nothing.
	a := &Agent{opts: opts, client: client, recorder: recorder, metrics: m, clock: clk, published: clk.Now()}
	a.cpu = cpuMeter{pods: map[types.UID]cpuReading{}}
	a.warned = map[types.UID]bool{}
	a.usage = newUsageSmoothers()

	node := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", opts.NodeName).String()
	}))
	pods := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", opts.NodeName).String()
	}))
	cms := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(opts.Namespace), informers.WithTweakListOptions(func(o *metav1ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", config.ConfigMapName).String()
	}))
	ni, pi, ci := node.Core().V1().Nodes(), pods.Core().V1().Pods(), cms.Core().V1().ConfigMaps()
	a.nodes, a.pods, a.configMaps = ni.Lister(), pi.Lister(), ci.Lister()
	a.synced = []cache.InformerSynced{ni.Informer().HasSynced, pi.Informer().HasSynced, ci.Informer().HasSynced}
	a.factories = []informers.SharedInformerFactory{node, pods, cms}
	return a
}

// Start starts the agent's informers and waits until their caches have
// synced; then Tick may be called. Run does both.
func (a *Agent) Start(ctx context.Context) error {
	for _, f := range a.factories {
		f.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), a.synced...) {
		return fmt.Errorf("caches of node %s did not sync", a.opts.NodeName)
	}
	klog.FromContext(ctx).Info("Agent started", "node", a.opts.NodeName, "cgroupRoot", a.opts.Layout.Root, "driver", a.opts.Layout.Driver)
	return nil
}

// Run starts the agent, then reads and acts every interval until ctx
// ends.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	t := a.clock.NewTicker(a.opts.Interval)
	defer t.Stop()
	for {
		a.Tick(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Tick reads the node once and acts on it.
func (a *Agent) Tick(ctx context.Context) {
	logger := klog.FromContext(ctx)
	node, err := a.nodes.Get(a.opts.NodeName)
	if err != nil {
		logger.V(2).Info("Node not known yet", "node", a.opts.NodeName, "err", err)
		return
	}
	cfg, cfgOK := a.nodeConfig(ctx, node)
	colocate := cfgOK && config.Colocated(node.Labels)
	if cfgOK && !colocate {
		a.standDown(ctx, node)
	}
	if !colocate && a.usageReport == nil {
		return
	}
	pods, err := a.pods.List(everything)
	if err != nil {
		logger.Error(err, "Listing the node's pods failed")
		return
	}
	live, classes := a.classify(pods, colocate)

	s, now, reading, ready := a.sample(ctx, node, live, classes)
	if ready && a.usageReport != nil {
		a.usageReport.window.Add(reading)
		if err := a.usageReport.report(ctx, node, a.clock.Now()); err != nil {
			a.metrics.UsageReportErrors.Inc()
			logger.Error(err, "Publishing the node's usage failed")
		}
	}
	if !colocate {
		return
	}
	if ready {
		a.publish(ctx, node, s, cfg)
	}
	a.tuneCgroups(ctx, live, classes, cfg)
	if ready {
		a.relieve(ctx, node, s.Allocatable, now, live, classes, cfg)
	}
}

// classify keeps the node's pods that have not ended, with their QoS
// classes. A pod with an unknown QoS level is warned of once, while the
// node colocates.
func (a *Agent) classify(pods []*corev1.Pod, warn bool) ([]*corev1.Pod, map[types.UID]qos.Class) {
	live := make([]*corev1.Pod, 0, len(pods))
	classes := make(map[types.UID]qos.Class, len(pods))
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		c, err := qos.Of(p)
		if err != nil && warn && !a.warned[p.UID] {
			a.warned[p.UID] = true
			a.recorder.Eventf(p, corev1.EventTypeWarning, "UnknownQoSLevel", "%v; treated as %s", err, c)
		}
		live = append(live, p)
		classes[p.UID] = c
	}
	for uid := range a.warned {
		if _, ok := classes[uid]; !ok {
			delete(a.warned, uid)
		}
	}
	return live, classes
}

// nodeConfig is the configuration in force on the node. A ConfigMap that
// cannot be read or validated is reported (once per version, by an event
// on the node and a metric) and the last valid one stays in force.
func (a *Agent) nodeConfig(ctx context.Context, node *corev1.Node) (config.Node, bool) {
	cm, err := a.configMaps.ConfigMaps(a.opts.Namespace).Get(config.ConfigMapName)
	switch {
	case err != nil:
		// No ConfigMap: the defaults.
		a.conf, a.confLoaded = nil, false
	case (!a.confLoaded || cm.ResourceVersion != a.confVersion) && (!a.badSeen || cm.ResourceVersion != a.badVersion):
		c, perr := config.Parse([]byte(cm.Data[config.ConfigMapKey]))
		if perr != nil {
			a.badVersion, a.badSeen = cm.ResourceVersion, true
			a.refuse(ctx, node, fmt.Sprintf("ConfigMap %s/%s: %v", cm.Namespace, cm.Name, perr))
			break
		}
		a.conf, a.confVersion, a.confLoaded = c, cm.ResourceVersion, true
		klog.FromContext(ctx).Info("Colocation configuration loaded", "configMap", klog.KObj(cm), "resourceVersion", cm.ResourceVersion)
	}
	cfg, err := a.conf.ForNode(node.Labels)
	if err != nil {
		a.refuse(ctx, node, fmt.Sprintf("configuration for node %s: %v", node.Name, err))
		return cfg, false
	}
	return cfg, true
}

func (a *Agent) refuse(ctx context.Context, node *corev1.Node, msg string) {
	klog.FromContext(ctx).Error(errors.New(msg), "Colocation configuration refused; the last valid one stays in force")
	a.metrics.ConfigErrors.Inc()
	a.recorder.Event(node, corev1.EventTypeWarning, "InvalidColocationConfig", msg)
}

// sample reads the node's usage: smoothed into s, as it is now into now
// and r (with each pod's). ready is false until CPU has been read twice (a
// rate needs two readings).
func (a *Agent) sample(ctx context.Context, node *corev1.Node, pods []*corev1.Pod, classes map[types.UID]qos.Class) (s oversub.Sample, now oversub.Amounts, r usage.Reading, ready bool) {
	logger := klog.FromContext(ctx)
	at := a.clock.Now()
	s.Allocatable = amountsOf(node.Status.Allocatable)
	nodeCPU, span, cpuOK := a.cpu.node(at, a.opts.Layout.Root)
	mem, err := cgroup.MemInfoUsed(a.opts.MemInfo)
	if err != nil {
		logger.Error(err, "Reading the node's memory usage failed")
		return s, now, r, false
	}
	r = usage.Reading{At: at, Span: span}
	var onlineCPU, onlineMem, offlineCPU, offlineMem float64
	seen := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		seen[p.UID] = true
		dir := a.opts.Layout.Pod(qos.KubeQOS(p), p.UID)
		cpu, podOK := a.cpu.pod(at, p.UID, dir)
		m, _ := cgroup.MemoryUsage(dir)
		if podOK {
			r.Pods = append(r.Pods, usage.Pod{UID: p.UID, Namespace: p.Namespace, Name: p.Name, Use: usage.Amounts{CPU: int64(cpu), Memory: m}})
		}
		if classes[p.UID].Offline() {
			offlineCPU += cpu
			offlineMem += float64(m)
			continue
		}
		onlineCPU += cpu
		onlineMem += float64(m)
		req := amountsOf(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		s.OnlineRequest.CPU += req.CPU
		s.OnlineRequest.Memory += req.Memory
	}
	a.cpu.forget(seen)
	if !cpuOK {
		return s, now, r, false
	}
	now = oversub.Amounts{CPU: int64(nodeCPU), Memory: mem}
	r.Node = usage.Amounts{CPU: now.CPU, Memory: now.Memory}
	s.NodeUsage = oversub.Amounts{CPU: int64(a.usage.nodeCPU.Add(nodeCPU)), Memory: int64(a.usage.nodeMem.Add(float64(mem)))}
	s.OnlineUsage = oversub.Amounts{CPU: int64(a.usage.onlineCPU.Add(onlineCPU)), Memory: int64(a.usage.onlineMem.Add(onlineMem))}
	s.OfflineUsage = oversub.Amounts{CPU: int64(offlineCPU), Memory: int64(offlineMem)}
	a.metrics.NodeUsage.WithLabelValues("cpu").Set(float64(s.NodeUsage.CPU) / 1000)
	a.metrics.NodeUsage.WithLabelValues("memory").Set(float64(s.NodeUsage.Memory))
	return s, now, r, true
}

// publish puts the batch resources on the node's status when they moved
// enough, or the resync period passed.
func (a *Agent) publish(ctx context.Context, node *corev1.Node, s oversub.Sample, cfg config.Node) {
	next := oversub.Compute(s, cfg)
	cur, present := published(node)
	now := a.clock.Now()
	due := a.opts.Resync > 0 && now.Sub(a.published) >= a.opts.Resync
	if !oversub.Worth(cur, next) && !(due && next != cur) && (present || next == (oversub.Amounts{})) {
		return
	}
	if err := a.patchBatch(ctx, node.Name, next); err != nil {
		klog.FromContext(ctx).Error(err, "Publishing batch resources failed", "node", klog.KObj(node))
		return
	}
	a.published = now
	a.metrics.Oversubscribed.WithLabelValues("cpu").Set(float64(next.CPU) / 1000)
	a.metrics.Oversubscribed.WithLabelValues("memory").Set(float64(next.Memory))
	klog.FromContext(ctx).V(2).Info("Published batch resources", "node", klog.KObj(node), "batchCPU", next.CPU, "batchMemory", next.Memory)
}

// standDown undoes the agent's marks on a node it no longer controls.
func (a *Agent) standDown(ctx context.Context, node *corev1.Node) {
	if _, present := published(node); present {
		if err := a.patchBatch(ctx, node.Name, oversub.Amounts{}); err != nil {
			klog.FromContext(ctx).Error(err, "Withdrawing batch resources failed", "node", klog.KObj(node))
		}
	}
	if hasTaint(node) {
		if err := a.setTaint(ctx, node.Name, false); err != nil {
			klog.FromContext(ctx).Error(err, "Removing the evicting taint failed", "node", klog.KObj(node))
		}
	}
	a.pressure.Active = false
}

// tuneCgroups writes every pod's settings.
func (a *Agent) tuneCgroups(ctx context.Context, pods []*corev1.Pod, classes map[types.UID]qos.Class, cfg config.Node) {
	logger := klog.FromContext(ctx)
	for _, p := range pods {
		for _, s := range tune.Pod(a.opts.Layout, p, classes[p.UID], cfg) {
			changed, err := cgroup.Write(s.Dir, s.File, s.Value)
			switch {
			case errors.Is(err, cgroup.ErrNoCgroup):
				// The kubelet has not made it yet, or removed it.
			case err != nil:
				a.metrics.CgroupWriteErrors.WithLabelValues(s.File).Inc()
				logger.Error(err, "Writing a cgroup file failed", "pod", klog.KObj(p), "file", s.File)
			case changed:
				logger.V(3).Info("Set cgroup file", "pod", klog.KObj(p), "dir", s.Dir, "file", s.File, "value", s.Value)
			}
		}
	}
}

// relieve taints the node while it is under pressure and evicts an
// offline pod while a resource is above its high watermark. It judges the
// usage as read now, not smoothed: an eviction's effect shows at the next
// reading.
func (a *Agent) relieve(ctx context.Context, node *corev1.Node, alloc, used oversub.Amounts, pods []*corev1.Pod, classes map[types.UID]qos.Class, cfg config.Node) {
	logger := klog.FromContext(ctx)
	if !cfg.Evicting {
		if hasTaint(node) {
			if err := a.setTaint(ctx, node.Name, false); err != nil {
				logger.Error(err, "Removing the evicting taint failed", "node", klog.KObj(node))
			}
		}
		return
	}
	a.pressure.Active = a.pressure.Active || hasTaint(node)
	u := evict.Usage{CPU: percent(used.CPU, alloc.CPU), Memory: percent(used.Memory, alloc.Memory)}
	over, res := a.pressure.Update(u, cfg)
	if a.pressure.Active != hasTaint(node) {
		if err := a.setTaint(ctx, node.Name, a.pressure.Active); err != nil {
			logger.Error(err, "Setting the evicting taint failed", "node", klog.KObj(node), "taint", a.pressure.Active)
		}
	}
	if !over || !a.limiter.Allow(a.clock.Now(), cfg.MinEvictionInterval) {
		return
	}
	var cands []evict.Candidate
	for _, p := range pods {
		if classes[p.UID].Offline() && p.DeletionTimestamp == nil {
			cands = append(cands, evict.CandidateOf(p))
		}
	}
	evict.Order(cands)
	high, pct := cfg.CPUHighWatermark, u.CPU
	if res == "memory" {
		high, pct = cfg.MemoryHighWatermark, u.Memory
	}
	reason := fmt.Sprintf("node %s %s usage %.0f%% is at or above the high watermark %d%%: evicting offline pods", node.Name, res, pct, high)
	for _, c := range cands {
		err := a.evict(ctx, c.Pod)
		if err != nil {
			logger.Error(err, "Evicting an offline pod failed", "pod", klog.KObj(c.Pod))
			continue
		}
		a.metrics.Evictions.WithLabelValues(res).Inc()
		a.recorder.Event(c.Pod, corev1.EventTypeWarning, "Evicted", reason)
		logger.Info("Evicted an offline pod", "pod", klog.KObj(c.Pod), "resource", res, "usagePercent", pct, "highWatermark", high)
		return
	}
}

func percent(used, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * float64(used) / float64(total)
}

// amountsOf reads cpu (milli) and memory (bytes) of a resource list.
func amountsOf(rl corev1.ResourceList) oversub.Amounts {
	cpu, mem := rl[corev1.ResourceCPU], rl[corev1.ResourceMemory]
	return oversub.Amounts{CPU: cpu.MilliValue(), Memory: mem.Value()}
}

// published is the batch resources the node's status shows.
func published(node *corev1.Node) (oversub.Amounts, bool) {
	cpu, hasCPU := node.Status.Allocatable[qos.BatchCPU]
	mem, hasMem := node.Status.Allocatable[qos.BatchMemory]
	return oversub.Amounts{CPU: cpu.Value(), Memory: mem.Value()}, hasCPU || hasMem
}

func hasTaint(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == EvictingTaint {
			return true
		}
	}
	return false
}

// batchQuantities are the batch resources as node status quantities:
// milli-CPUs as a plain number, bytes.
func batchQuantities(a oversub.Amounts) (cpu, mem resource.Quantity) {
	return *resource.NewQuantity(a.CPU, resource.DecimalSI), *resource.NewQuantity(a.Memory, resource.BinarySI)
}
