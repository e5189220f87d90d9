package podfit

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// newDRAManager builds what kube-scheduler's DynamicResources plugin reads
// claims, slices and classes through, the way kube-scheduler builds it: an
// assume cache over the claim informer (so a claim the plugin wrote is
// seen at once, before its watch event), a slice tracker that applies
// device taint rules, and the extended-resource cache fed by the
// DeviceClass informer (DeviceClasses that back an extended resource). It
// registers the informers on the factory; start the factory after New.
func newDRAManager(ctx context.Context, factory informers.SharedInformerFactory, cs clientset.Interface, gate featuregate.FeatureGate) (fwk.SharedDRAManager, error) {
	logger := klog.FromContext(ctx)
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   gate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: gate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               cs,
	}
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
	slices, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("podfit: starting the ResourceSlice tracker: %w", err)
	}
	m := dynamicresources.NewDRAManager(ctx, claims, slices, factory)
	// The manager holds an extended-resource cache when DRAExtendedResource
	// is on (locked on since 1.37); nothing fills it but DeviceClass events.
	if erCache, ok := m.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && erCache != nil {
		if _, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache); err != nil {
			return nil, fmt.Errorf("podfit: watching DeviceClasses: %w", err)
		}
	}
	return m, nil
}

// discardEvents is the event recorder when the caller gives none: the
// DynamicResources plugin records an event while a device's binding
// conditions are pending.
type discardEvents struct{}

func (discardEvents) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {}
func (discardEvents) AnnotatedEventf(runtime.Object, runtime.Object, map[string]string, string, string, string, string, ...any) {
}
func (d discardEvents) WithLogger(klog.Logger) events.EventRecorderLogger { return d }
