// Package app assembles caldera-scheduler: clients, informers feeding the
// cache, the binder, the status writer, the scheduling loop, health and
// metrics endpoints, and leader election.
package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/cmd/caldera-scheduler/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
	promsource "github.com/caldera-sh/caldera/pkg/loadaware/prometheus"
	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/binder"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/evictor"
	"github.com/caldera-sh/caldera/pkg/scheduler/fastlane"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/metrics"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/usage"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/pkg/scheduler/sharding"
	"github.com/caldera-sh/caldera/pkg/scheduler/writeback"
)

// NewSchedulerCommand returns the caldera-scheduler command.
func NewSchedulerCommand(ctx context.Context) *cobra.Command {
	cmd := component.NewCommand("caldera-scheduler", "Caldera's job-centric batch scheduler: gangs, queues, fair share",
		options.NewOptions(profile.NameRegistry()), func(c *options.Config) error { return Run(ctx, c) })
	cmd.Long = `caldera-scheduler places the pods of batch jobs whole (gang scheduling), from
hierarchical queues with capacities and fair shares, with pod constraints
evaluated exactly as kube-scheduler evaluates them. It serves pods whose
schedulerName is "volcano" by default and accepts a Volcano scheduler
configuration file.`
	return cmd
}

// Run sets the scheduler up and runs it until ctx ends.
func Run(ctx context.Context, config *options.Config) error {
	s, err := Setup(ctx, config)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx)
}

// Server is a scheduler set up, not yet running: its clients, cache,
// binder, evictor, status writer and scheduler, with the informers wired
// to the cache but not started.
type Server struct {
	cfg       *configv1alpha1.SchedulerConfiguration
	clientset kubernetes.Interface
	factory   informers.SharedInformerFactory
	// pollUsage reads the nodes' usage from the configured metrics
	// source until its context ends; nil without one.
	pollUsage func(context.Context)
	// deviceFactory watches the vGPU device plugin's ConfigMap, when a tier
	// places vGPUs.
	deviceFactory informers.SharedInformerFactory
	crdCache      ctrlcache.Cache
	// shardSynced is the NodeShard informer's, when the scheduler keeps
	// to a shard.
	shardSynced toolscache.InformerSynced
	synced      []toolscache.InformerSynced
	cache       *cache.Cache
	sched       *scheduler.Scheduler
	binder      *binder.Binder
	lane        *fastlane.Lane
	evictor     *evictor.Evictor
	writer      *writeback.Writer
	broadcaster events.EventBroadcaster
	registry    *prometheus.Registry
	restConfig  *rest.Config
	metrics     metricsserving.Options
	closers     []func()
}

// Setup builds everything the scheduler runs from its configuration.
// Close releases what it holds.
func Setup(ctx context.Context, config *options.Config) (_ *Server, err error) {
	ctrl.SetLogger(klog.NewKlogr())
	logger := klog.FromContext(ctx)
	cfg := config.Configuration
	srv := &Server{cfg: cfg, metrics: config.Metrics}
	defer func() {
		if err != nil {
			srv.Close()
		}
	}()
	restCfg, err := clientConfig(cfg.ClientConnection, config.Master)
	if err != nil {
		return nil, err
	}
	srv.restConfig = rest.CopyConfig(restCfg)
	// Built-in types travel as protobuf (or as configured); custom
	// resources only exist as JSON.
	coreCfg := rest.CopyConfig(restCfg)
	coreCfg.ContentType = cfg.ClientConnection.ContentType
	if coreCfg.AcceptContentTypes == "" && coreCfg.ContentType != "application/json" {
		coreCfg.AcceptContentTypes = coreCfg.ContentType + ",application/json"
	}
	restCfg.ContentType, restCfg.AcceptContentTypes = "application/json", ""
	clientset, err := kubernetes.NewForConfig(coreCfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	scheme, err := apischeme.New()
	if err != nil {
		return nil, err
	}
	// One transform for every informer, so that they share what is equal
	// across objects.
	transform := cache.NewTransform()
	factory := newInformerFactory(clientset, transform)
	broadcaster := events.NewBroadcaster(component.NewEventSink(clientset))
	recorder := broadcaster.NewRecorder(scheme, "caldera-scheduler")
	fitOpts, needFit, err := profile.PodFitOptions(cfg)
	if err != nil {
		return nil, err
	}
	// buildProfile builds the plugins, with a pod-fit evaluator of their
	// own when they need one: a session's plugins keep per-session state,
	// so the cycle and each fast-lane worker have their own.
	buildProfile := func() (*profile.Profile, error) {
		h := &framework.Handle{}
		if needFit {
			fit, err := podfit.New(ctx, podfit.Options{InformerFactory: factory, ClientSet: clientset, Profile: fitOpts, EventRecorder: recorder})
			if err != nil {
				return nil, err
			}
			h.PodFit = fit
			srv.closers = append(srv.closers, func() { _ = fit.Close() })
		}
		return profile.Build(cfg, h)
	}
	// Nodes carry kube-scheduler's view of them when its plugins run.
	var newMirror func() api.NodeMirror
	if needFit {
		newMirror = podfit.NewNodeMirror
	}
	prof, err := buildProfile()
	if err != nil {
		return nil, err
	}
	var fastTiers [][]framework.Tier
	if cfg.FastLane.Enabled() {
		for range *cfg.FastLane.Workers {
			p, err := buildProfile()
			if err != nil {
				return nil, err
			}
			fastTiers = append(fastTiers, p.Tiers)
		}
	}
	preBinder := prof.PreBinder()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New()
	if err := m.Register(reg); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}

	crdCache, err := ctrlcache.New(restCfg, ctrlcache.Options{Scheme: scheme, DefaultTransform: transform})
	if err != nil {
		return nil, fmt.Errorf("creating cache: %w", err)
	}

	var sched *scheduler.Scheduler
	var lane *fastlane.Lane
	c := cache.New(cache.Options{
		SchedulerNames: cfg.SchedulerNames,
		Notify: func() {
			sched.Notify()
			if lane != nil {
				lane.Notify()
			}
		},
		Logger:        logger,
		NewNodeMirror: newMirror,
		FastLane:      cache.FastLaneSelector{SchedulerNames: cfg.FastLane.SchedulerNames, Queues: cfg.FastLane.Queues},
	})
	b := binder.New(binder.KubeBinder{Client: clientset}, c, binder.Options{
		Concurrency: int(*cfg.Binder.Concurrency),
		Timeout:     cfg.Binder.Timeout.Duration,
		PreBinder:   preBinder,
		OnResult: func(r binder.Result) {
			m.ObserveBind(r)
			if r.Err == nil && r.Task.Pod != nil {
				recorder.Eventf(r.Task.Pod, nil, corev1.EventTypeNormal, "Scheduled", "Binding",
					"Successfully assigned %s/%s to %s", r.Task.Namespace, r.Task.Name, r.Node)
			}
		},
	})
	ev := evictor.New(evictor.KubeEvictor{Client: clientset}, evictor.Options{
		Concurrency: int(*cfg.Binder.Concurrency),
		Timeout:     cfg.Binder.Timeout.Duration,
		OnResult: func(r evictor.Result) {
			if r.Err != nil {
				// The victim runs on; it is not chosen again for a while
				// (a disruption budget may allow it later).
				c.ForgetEviction(r.Task.UID, time.Now().Add(evictionRetryAfter))
			}
			if r.Task.Pod == nil {
				return
			}
			if r.Err != nil {
				recorder.Eventf(r.Task.Pod, nil, corev1.EventTypeWarning, "FailedPreemption", "Evicting", "%s: %v", r.Reason, r.Err)
				return
			}
			recorder.Eventf(r.Task.Pod, nil, corev1.EventTypeNormal, "Preempted", "Evicting", "%s", r.Reason)
		},
	})
	statusClient, err := writeback.NewStatusClient(restCfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	writer := writeback.NewWriter(statusClient, recorder)
	var shard scheduler.ShardSyncer
	if cfg.Sharding.Mode != configv1alpha1.ShardingNone {
		coord, synced, err := watchNodeShard(ctx, cfg, restCfg, scheme, clientset, crdCache, c, b, func() { sched.Notify() })
		if err != nil {
			return nil, err
		}
		shard = coord
		srv.shardSynced = synced
	}
	sched = scheduler.New(c, scheduler.Options{
		Actions:        prof.Actions,
		Tiers:          prof.Tiers,
		CoalesceWindow: cfg.Cycle.CoalesceWindow.Duration,
		Heartbeat:      cfg.Cycle.Heartbeat.Duration,
		MaxCycle:       cfg.Cycle.MaxDuration.Duration,
		Binder:         b,
		Evictor:        ev,
		Nominations:    writer,
		Status:         writer,
		NodesToFind: framework.NodesToFind(int(*cfg.NodeSampling.PercentageOfNodesToFind),
			int(*cfg.NodeSampling.MinNodesToFind)),
		Shard:    shard,
		Observer: m,
	})
	if len(fastTiers) > 0 {
		lane = fastlane.New(c, fastlane.Options{
			Tiers: fastTiers,
			// Fast-lane binds do not queue behind a cycle's gang binds.
			Binder: b.Urgent(),
			NodesToFind: framework.NodesToFind(int(*cfg.NodeSampling.PercentageOfNodesToFind),
				int(*cfg.NodeSampling.MinNodesToFind)),
			Placing:  sched.Placing,
			Explain:  sched.RecordOutcomes,
			Observer: m,
		})
	}

	coreSynced, err := wireCoreInformers(c, factory)
	if err != nil {
		return nil, err
	}
	deviceConfig, err := profile.DeviceConfig(cfg)
	if err != nil {
		return nil, err
	}
	if deviceConfig != nil {
		f, synced, err := watchDeviceConfig(clientset, deviceConfig, c, recorder, logger)
		if err != nil {
			return nil, err
		}
		srv.deviceFactory = f
		coreSynced = append(coreSynced, synced)
	}
	crdSynced, err := wireCRDInformers(ctx, c, crdCache)
	if err != nil {
		return nil, err
	}
	if usesPlugin(cfg, usage.Name) {
		if ms := cfg.MetricsSource; ms != nil {
			// The usage plugin reads Prometheus instead of NodeUsage.
			nodes := factory.Core().V1().Nodes().Lister()
			src := &promsource.Source{Address: ms.Address, Client: &http.Client{Timeout: 30 * time.Second}}
			srv.pollUsage = func(ctx context.Context) {
				src.Poll(ctx, ms.Interval.Duration, func() map[string]promsource.Capacity {
					return nodeCapacities(nodes)
				}, c.SetNodeUsage, func(err error) {
					klog.FromContext(ctx).Error(err, "Reading the nodes' usage from the metrics source failed; nodes keep their last usage until it is stale", "address", ms.Address)
				})
			}
		} else {
			synced, err := watchNodeUsage(ctx, c, crdCache)
			if err != nil {
				return nil, err
			}
			crdSynced = append(crdSynced, synced)
		}
	}

	if srv.shardSynced != nil {
		crdSynced = append(crdSynced, srv.shardSynced)
	}
	srv.clientset, srv.factory, srv.crdCache, srv.synced = clientset, factory, crdCache, append(coreSynced, crdSynced...)
	srv.lane = lane
	srv.cache, srv.sched, srv.binder, srv.evictor, srv.writer, srv.broadcaster, srv.registry = c, sched, b, ev, writer, broadcaster, reg
	return srv, nil
}

// Close releases what Setup acquired.
func (s *Server) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Run serves health, metrics and explanations, starts the informers, waits
// until the cache has seen their initial lists, and schedules until ctx
// ends, as the leader when leader election is on.
func (s *Server) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	cfg, sched, factory, crdCache, c, b, ev, writer, broadcaster := s.cfg, s.sched, s.factory, s.crdCache, s.cache, s.binder, s.evictor, s.writer, s.broadcaster
	var ready atomic.Bool
	servers, err := s.startServers(ctx, sched.ExplainHandler(), &ready)
	if err != nil {
		return err
	}
	defer servers()

	// Events are recorded from the start: the informers' handlers report
	// configurations that do not read (watchDeviceConfig) before the
	// scheduler leads.
	broadcaster.StartRecordingToSink(ctx.Done())
	factory.Start(ctx.Done())
	if s.deviceFactory != nil {
		s.deviceFactory.Start(ctx.Done())
	}
	go func() {
		if err := crdCache.Start(ctx); err != nil {
			logger.Error(err, "CRD informers stopped")
		}
	}()
	logger.Info("Waiting for informers to sync")
	factory.WaitForCacheSync(ctx.Done())
	if !crdCache.WaitForCacheSync(ctx) {
		return errors.New("CRD informers did not sync")
	}
	// The stores being synced does not mean the cache has seen every
	// object: wait until the handlers got the initial lists, so that the
	// first cycle does not find gangs with only some of their pods.
	if !toolscache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return errors.New("the scheduler's cache did not receive the informers' initial lists")
	}
	logger.Info("Informers synced", "cache", c.Stats())
	if s.pollUsage != nil {
		go s.pollUsage(ctx)
	}

	run := func(ctx context.Context) {
		// Binds outlive the decisions: when scheduling stops, the binds
		// already queued (a gang's among them) are finished rather than
		// dropped half-way, for at most drainTimeout.
		bindCtx, stopBinds := context.WithCancel(context.WithoutCancel(ctx))
		defer stopBinds()
		go b.Run(bindCtx)
		go ev.Run(ctx)
		go writer.Run(ctx, statusWorkers)
		ready.Store(true)
		logger.Info("Scheduling", "schedulerNames", cfg.SchedulerNames, "actions", cfg.Actions)
		laneDone := make(chan struct{})
		if s.lane != nil {
			logger.Info("Fast lane on", "schedulerNames", cfg.FastLane.SchedulerNames, "queues", cfg.FastLane.Queues, "workers", *cfg.FastLane.Workers)
			go func() {
				s.lane.Run(ctx)
				close(laneDone)
			}()
			s.lane.Notify()
		} else {
			close(laneDone)
		}
		sched.Notify()
		sched.Run(ctx)
		<-laneDone
		if !b.Drain(drainTimeout) {
			logger.Info("Stopping with binds unfinished", "after", drainTimeout)
		}
	}
	if cfg.LeaderElection.LeaderElect == nil || !*cfg.LeaderElection.LeaderElect {
		run(ctx)
		return nil
	}
	return lead(ctx, cfg.LeaderElection, s.clientset, run)
}

// drainTimeout bounds how long a stopping scheduler waits for the binds it
// queued.
const drainTimeout = 10 * time.Second

// evictionRetryAfter is how long a pod whose eviction was refused is not
// chosen as a victim again.
const evictionRetryAfter = 30 * time.Second

func clientConfig(cc configv1alpha1.ClientConnectionConfiguration, master string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if cc.Kubeconfig == "" && master == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags(master, cc.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	if cc.QPS != nil {
		cfg.QPS = *cc.QPS
	}
	if cc.Burst != nil {
		cfg.Burst = int(*cc.Burst)
	}
	cfg.AcceptContentTypes = cc.AcceptContentTypes
	cfg.UserAgent = "caldera-scheduler"
	return cfg, nil
}

// newInformerFactory returns the informer factory of every built-in type the
// scheduler and kube-scheduler's plugins read. Pods that have ended are
// watched too: a PodGroup whose pods all finished is Completed, not Pending.
//
// Objects are kept as transform leaves them (cache.NewTransform): without
// what nothing in the scheduler reads, such as managedFields and what a
// pod runs rather than what it asks for, and sharing equal parts.
func newInformerFactory(clientset kubernetes.Interface, transform toolscache.TransformFunc) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithTransform(transform))
}

func wireCoreInformers(c *cache.Cache, factory informers.SharedInformerFactory) ([]toolscache.InformerSynced, error) {
	var synced []toolscache.InformerSynced
	add := func(i toolscache.SharedIndexInformer, h toolscache.ResourceEventHandler) error {
		reg, err := i.AddEventHandler(h)
		if err != nil {
			return err
		}
		synced = append(synced, reg.HasSynced)
		return nil
	}
	if err := add(factory.Core().V1().Pods().Informer(), toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdatePod(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { c.UpdatePod(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if pod, ok := unwrap[*corev1.Pod](obj); ok {
				c.DeletePod(pod)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := add(factory.Core().V1().Nodes().Informer(), toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdateNode(obj.(*corev1.Node)) },
		UpdateFunc: func(_, obj any) { c.UpdateNode(obj.(*corev1.Node)) },
		DeleteFunc: func(obj any) {
			if n, ok := unwrap[*corev1.Node](obj); ok {
				c.DeleteNode(n)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := add(factory.Scheduling().V1().PriorityClasses().Informer(), toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdatePriorityClass(obj.(*schedv1.PriorityClass)) },
		UpdateFunc: func(_, obj any) { c.UpdatePriorityClass(obj.(*schedv1.PriorityClass)) },
		DeleteFunc: func(obj any) {
			if pc, ok := unwrap[*schedv1.PriorityClass](obj); ok {
				c.DeletePriorityClass(pc)
			}
		},
	}); err != nil {
		return nil, err
	}
	return synced, nil
}

func wireCRDInformers(ctx context.Context, c *cache.Cache, crdCache ctrlcache.Cache) ([]toolscache.InformerSynced, error) {
	pgInformer, err := crdCache.GetInformer(ctx, &schedulingv1beta1.PodGroup{})
	if err != nil {
		return nil, fmt.Errorf("PodGroup informer: %w", err)
	}
	pgReg, err := pgInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdatePodGroup(obj.(*schedulingv1beta1.PodGroup)) },
		UpdateFunc: func(_, obj any) { c.UpdatePodGroup(obj.(*schedulingv1beta1.PodGroup)) },
		DeleteFunc: func(obj any) {
			if pg, ok := unwrap[*schedulingv1beta1.PodGroup](obj); ok {
				c.DeletePodGroup(pg)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	qInformer, err := crdCache.GetInformer(ctx, &schedulingv1beta1.Queue{})
	if err != nil {
		return nil, fmt.Errorf("Queue informer: %w", err)
	}
	qReg, err := qInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdateQueue(obj.(*schedulingv1beta1.Queue)) },
		UpdateFunc: func(_, obj any) { c.UpdateQueue(obj.(*schedulingv1beta1.Queue)) },
		DeleteFunc: func(obj any) {
			if q, ok := unwrap[*schedulingv1beta1.Queue](obj); ok {
				c.DeleteQueue(q)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	hnInformer, err := crdCache.GetInformer(ctx, &topologyv1alpha1.HyperNode{})
	if err != nil {
		return nil, fmt.Errorf("HyperNode informer: %w", err)
	}
	hnReg, err := hnInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdateHyperNode(obj.(*topologyv1alpha1.HyperNode)) },
		UpdateFunc: func(_, obj any) { c.UpdateHyperNode(obj.(*topologyv1alpha1.HyperNode)) },
		DeleteFunc: func(obj any) {
			if hn, ok := unwrap[*topologyv1alpha1.HyperNode](obj); ok {
				c.DeleteHyperNode(hn)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	ntInformer, err := crdCache.GetInformer(ctx, &nodeinfov1alpha1.Numatopology{})
	if err != nil {
		return nil, fmt.Errorf("Numatopology informer: %w", err)
	}
	ntReg, err := ntInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdateNumatopology(obj.(*nodeinfov1alpha1.Numatopology)) },
		UpdateFunc: func(_, obj any) { c.UpdateNumatopology(obj.(*nodeinfov1alpha1.Numatopology)) },
		DeleteFunc: func(obj any) {
			if nt, ok := unwrap[*nodeinfov1alpha1.Numatopology](obj); ok {
				c.DeleteNumatopology(nt)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return []toolscache.InformerSynced{pgReg.HasSynced, qReg.HasSynced, hnReg.HasSynced, ntReg.HasSynced}, nil
}

// watchNodeUsage feeds the nodes' measured use to the cache, for the
// usage plugin; only a configuration with that plugin watches it.
func watchNodeUsage(ctx context.Context, c *cache.Cache, crdCache ctrlcache.Cache) (toolscache.InformerSynced, error) {
	inf, err := crdCache.GetInformer(ctx, &metricsv1alpha1.NodeUsage{})
	if err != nil {
		return nil, fmt.Errorf("NodeUsage informer: %w", err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.UpdateNodeUsage(obj.(*metricsv1alpha1.NodeUsage)) },
		UpdateFunc: func(_, obj any) { c.UpdateNodeUsage(obj.(*metricsv1alpha1.NodeUsage)) },
		DeleteFunc: func(obj any) {
			if nu, ok := unwrap[*metricsv1alpha1.NodeUsage](obj); ok {
				c.DeleteNodeUsage(nu)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return reg.HasSynced, nil
}

// nodeCapacities are the nodes' CPU and memory capacities, by which the
// metrics source's percentages become amounts.
func nodeCapacities(nodes corelisters.NodeLister) map[string]promsource.Capacity {
	list, err := nodes.List(labels.Everything())
	if err != nil {
		return nil
	}
	out := make(map[string]promsource.Capacity, len(list))
	for _, n := range list {
		out[n.Name] = promsource.Capacity{CPU: n.Status.Capacity.Cpu().MilliValue(), Memory: n.Status.Capacity.Memory().Value()}
	}
	return out
}

// usesPlugin reports whether a tier of the configuration lists the plugin.
func usesPlugin(cfg *configv1alpha1.SchedulerConfiguration, name string) bool {
	for _, t := range cfg.Tiers {
		for _, p := range t.Plugins {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// unwrap returns the object of a delete event, also when the informer only
// knew its last state (a tombstone).
func unwrap[T any](obj any) (T, bool) {
	if t, ok := obj.(T); ok {
		return t, true
	}
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		t, ok := tomb.Obj.(T)
		return t, ok
	}
	var zero T
	return zero, false
}

// startServers serves /healthz and /readyz over plain HTTP, for probes,
// and /metrics, the explanations (and pprof when profiling is on) as
// s.metrics says: over HTTPS to reviewed callers, or, insecurely, on the
// health listener when the two addresses are the same.
func (s *Server) startServers(ctx context.Context, explain http.Handler, ready *atomic.Bool) (func(), error) {
	cfg := s.cfg
	health := http.NewServeMux()
	health.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	health.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready: waiting for informers or leadership", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	// What keeps each pending job from being placed, for calderactl.
	mux.Handle(scheduler.ExplainPath, explain)
	if cfg.EnableProfiling != nil && *cfg.EnableProfiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	var stops []func()
	stop := func() {
		for _, f := range stops {
			f()
		}
	}
	serve := func(flag, addr string, o metricsserving.Options, h http.Handler) error {
		if metricsserving.Off(addr) {
			return nil
		}
		srv, err := metricsserving.Serve(ctx, addr, o, s.restConfig, h)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		stops = append(stops, srv.Stop)
		return nil
	}
	plain := metricsserving.Options{}
	if cfg.HealthzBindAddress == cfg.MetricsBindAddress && !s.metrics.Secure {
		health.Handle("/", mux)
		if err := serve("healthzBindAddress", cfg.HealthzBindAddress, plain, health); err != nil {
			return nil, err
		}
		return stop, nil
	}
	if err := serve("healthzBindAddress", cfg.HealthzBindAddress, plain, health); err != nil {
		return nil, err
	}
	if err := serve("metricsBindAddress", cfg.MetricsBindAddress, s.metrics, mux); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// lead runs run while this replica holds the lease.
func lead(ctx context.Context, le configv1alpha1.LeaderElectionConfiguration, clientset kubernetes.Interface, run func(context.Context)) error {
	id, err := os.Hostname()
	if err != nil {
		return err
	}
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		clientset.CoreV1(), clientset.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	logger := klog.FromContext(ctx)
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		Name:            le.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: run,
			OnStoppedLeading: func() { logger.Info("Lost leadership") },
		},
	})
	if ctx.Err() == nil {
		// Another replica may be scheduling now: stop rather than race it.
		return errors.New("lost leadership")
	}
	return nil
}

// statusWorkers bounds the PodGroup and Queue status writes in flight. A
// job controller creates a gang's pods once its PodGroup shows Inqueue, so
// admissions must not wait behind each other: with 4 writers, a burst of
// 1,000 Jobs was admitted at about 12 PodGroups a second while binds
// loaded the API server.
const statusWorkers = 16

// watchNodeShard starts keeping the scheduler to its NodeShard: a
// coordinator that reads NodeShards from the informer cache and writes the
// instance's status, told of every NodeShard change.
func watchNodeShard(ctx context.Context, cfg *configv1alpha1.SchedulerConfiguration, restCfg *rest.Config, scheme *runtime.Scheme,
	clientset kubernetes.Interface, crdCache ctrlcache.Cache, c *cache.Cache, b *binder.Binder, notify func()) (*sharding.Coordinator, toolscache.InformerSynced, error) {
	name := cfg.Sharding.ShardName
	if name == "" {
		name = cfg.SchedulerNames[0]
	}
	cl, err := client.New(restCfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: crdCache}})
	if err != nil {
		return nil, nil, fmt.Errorf("creating client: %w", err)
	}
	coord := sharding.New(sharding.Options{
		Name:    name,
		Soft:    cfg.Sharding.Mode == configv1alpha1.ShardingSoft,
		Client:  cl,
		Fence:   c,
		Busy:    b.Busy,
		Witness: podWitness{cache: c, client: clientset},
	})
	inf, err := crdCache.GetInformer(ctx, &shardv1alpha1.NodeShard{})
	if err != nil {
		return nil, nil, fmt.Errorf("NodeShard informer: %w", err)
	}
	changed := func() {
		coord.Changed()
		notify()
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(_, _ any) { changed() },
		DeleteFunc: func(any) { changed() },
	})
	if err != nil {
		return nil, nil, err
	}
	klog.FromContext(ctx).Info("Keeping to a node shard", "shard", name, "mode", cfg.Sharding.Mode)
	return coord, reg.HasSynced, nil
}

// podWitness confirms a node taken into the shard once the cache holds
// every pod bound there: at once when the cache has seen pod events past
// the NodeShards' latest write (every bind before a release is older),
// else by listing the node's pods from the API server.
type podWitness struct {
	cache  *cache.Cache
	client kubernetes.Interface
}

func (w podWitness) CacheHolds(ctx context.Context, node, since string) (bool, error) {
	if w.cache.PodsSeenSince(since) {
		return true, nil
	}
	pods, err := w.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return false, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	uids := make([]types.UID, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			uids = append(uids, p.UID)
		}
	}
	return w.cache.HoldsPods(node, uids), nil
}
