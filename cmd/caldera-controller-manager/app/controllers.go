package app

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"

	"github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
	"github.com/caldera-sh/caldera/pkg/controllers/cronjob"
	"github.com/caldera-sh/caldera/pkg/controllers/descheduler"
	"github.com/caldera-sh/caldera/pkg/controllers/hypernode"
	"github.com/caldera-sh/caldera/pkg/controllers/job"
	"github.com/caldera-sh/caldera/pkg/controllers/jobflow"
	"github.com/caldera-sh/caldera/pkg/controllers/podgroup"
	"github.com/caldera-sh/caldera/pkg/controllers/queue"
	"github.com/caldera-sh/caldera/pkg/controllers/sharding"
)

// controller is one controller the manager can run.
type controller struct {
	name  string
	setup func(mgr ctrl.Manager, c *options.Config) error
	// watches is the kind of object whose events drive the controller:
	// the manager is ready once its informer has synced.
	watches client.Object
}

// controllers lists every controller, in the order they are set up.
func controllers() []controller {
	return []controller{
		{name: job.Name, setup: func(mgr ctrl.Manager, c *options.Config) error {
			return job.NewReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("caldera-job-controller"), c.SchedulerNames, clock.RealClock{}).
				SetupWithManager(mgr, c.Workers)
		}, watches: &batchv1alpha1.Job{}},
		{name: podgroup.ControllerName, setup: func(mgr ctrl.Manager, c *options.Config) error {
			return podgroup.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-podgroup-controller"), c.SchedulerNames).
				SetupWithManager(mgr)
		}, watches: &corev1.Pod{}},
		{name: queue.ControllerName, setup: func(mgr ctrl.Manager, _ *options.Config) error {
			return queue.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-queue-controller"), clock.RealClock{}, queue.DefaultCommandWait).
				SetupWithManager(mgr)
		}, watches: &schedulingv1beta1.Queue{}},
		{name: cronjob.Name, setup: func(mgr ctrl.Manager, _ *options.Config) error {
			return cronjob.NewReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("caldera-cronjob-controller"), clock.RealClock{}).SetupWithManager(mgr)
		}, watches: &batchv1alpha1.CronJob{}},
		{name: jobflow.Name, setup: func(mgr ctrl.Manager, _ *options.Config) error {
			return jobflow.NewReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("caldera-jobflow-controller"), clock.RealClock{}).SetupWithManager(mgr)
		}, watches: &flowv1alpha1.JobFlow{}},
		{name: hypernode.ControllerName, setup: func(mgr ctrl.Manager, c *options.Config) error {
			return hypernode.NewReconciler(mgr.GetClient(), c.HyperNodeDiscovery, clock.RealClock{}).SetupWithManager(mgr)
		}, watches: &topologyv1alpha1.HyperNode{}},
		{name: sharding.ControllerName, setup: func(mgr ctrl.Manager, c *options.Config) error {
			return sharding.NewReconciler(mgr.GetClient(), c.Sharding, clock.RealClock{}).SetupWithManager(mgr)
		}, watches: &shardv1alpha1.NodeShard{}},
		{name: descheduler.ControllerName, setup: func(mgr ctrl.Manager, c *options.Config) error {
			return descheduler.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-descheduler"), c.Descheduler, clock.RealClock{}).SetupWithManager(mgr)
		}, watches: &metricsv1alpha1.NodeUsage{}},
	}
}

// ControllerNames are the names of the controllers the manager can run.
func ControllerNames() []string {
	var names []string
	for _, c := range controllers() {
		names = append(names, c.name)
	}
	return names
}

// informersSynced is the manager's readiness: with leader election, a
// replica waiting to be elected is ready (it serves nothing until then,
// and a rollout must not wait for it); the leader, or the only replica
// when there is no election, is ready once the informers driving its
// controllers have delivered their initial lists. Objects listed at
// start-up are handled after every later event, so a client that waits
// for readiness before a burst of Jobs sees them handled in order.
func informersSynced(mgr ctrl.Manager, leaderElect bool, watched []client.Object) func(*http.Request) error {
	return func(req *http.Request) error {
		if leaderElect {
			select {
			case <-mgr.Elected():
			default:
				return nil
			}
		}
		for _, obj := range watched {
			inf, err := mgr.GetCache().GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				return fmt.Errorf("informer for %T: %w", obj, err)
			}
			if !inf.HasSynced() {
				return fmt.Errorf("informer for %T has not synced", obj)
			}
		}
		return nil
	}
}
