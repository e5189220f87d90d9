package karmada

import (
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/config/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

// AddToScheme registers every mirrored Karmada type.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1alpha1.AddToScheme, policyv1alpha1.AddToScheme, workv1alpha2.AddToScheme, configv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}
