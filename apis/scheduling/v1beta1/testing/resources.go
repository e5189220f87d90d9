// Package testing builds scheduling.volcano.sh/v1beta1 objects for tests:
// MakeQueue("q").Weight(2).Capability(Resources("cpu", "4")).Obj().
package testing

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources builds a ResourceList from name, quantity pairs:
// Resources("cpu", "4", "memory", "8Gi"). It panics on an odd number of
// arguments or a malformed quantity, which in a test is a bug in the test.
func Resources(nameQuantityPairs ...string) corev1.ResourceList {
	if len(nameQuantityPairs)%2 != 0 {
		panic(fmt.Sprintf("Resources: odd number of arguments %q", nameQuantityPairs))
	}
	rl := corev1.ResourceList{}
	for i := 0; i < len(nameQuantityPairs); i += 2 {
		rl[corev1.ResourceName(nameQuantityPairs[i])] = resource.MustParse(nameQuantityPairs[i+1])
	}
	return rl
}
