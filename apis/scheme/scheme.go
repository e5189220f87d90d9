// Package scheme assembles the runtime scheme of every API Caldera serves,
// together with the Kubernetes built-in types its components use.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	datadependencyv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// AddToScheme registers every Caldera API group with s.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		batchv1alpha1.AddToScheme,
		busv1alpha1.AddToScheme,
		flowv1alpha1.AddToScheme,
		datadependencyv1alpha1.AddToScheme,
		metricsv1alpha1.AddToScheme,
		nodeinfov1alpha1.AddToScheme,
		schedulingv1beta1.AddToScheme,
		shardv1alpha1.AddToScheme,
		topologyv1alpha1.AddToScheme,
		trainingv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// New returns a scheme with client-go's built-in types, CRDs and every
// Caldera API group.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
