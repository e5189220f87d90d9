package app

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// watchDeviceConfig follows the vGPU device plugin's ConfigMap and gives
// the cache the MIG geometries it lists: the shipped ones while it is
// absent or lists none. A configuration that does not read keeps the
// geometries in force, and is reported on the ConfigMap as a warning
// event naming the field. It watches that one ConfigMap only.
func watchDeviceConfig(clientset kubernetes.Interface, ref *configv1alpha1.ConfigMapReference, c *cache.Cache,
	recorder events.EventRecorder, logger klog.Logger) (informers.SharedInformerFactory, toolscache.InformerSynced, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(ref.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.Name).String()
		}))
	apply := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return
		}
		g, err := vgpu.ParseDeviceConfig([]byte(cm.Data[vgpu.DeviceConfigKey]))
		if err != nil {
			logger.Error(err, "The vGPU device configuration does not read; the MIG geometries in force stay", "configMap", klog.KObj(cm))
			recorder.Eventf(cm, nil, corev1.EventTypeWarning, "InvalidDeviceConfig", "ReadMIGGeometries", "%v", err)
			return
		}
		logger.Info("MIG geometries from the vGPU device configuration", "configMap", klog.KObj(cm), "models", len(g), "shipped", g == nil)
		c.SetMIGGeometries(g)
	}
	reg, err := factory.Core().V1().ConfigMaps().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
		DeleteFunc: func(any) {
			logger.Info("The vGPU device configuration is gone; the shipped MIG geometries apply", "configMap", ref.Namespace+"/"+ref.Name)
			c.SetMIGGeometries(nil)
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("watching ConfigMap %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return factory, reg.HasSynced, nil
}
