// Package quantity writes amounts of resources as the Kubernetes quantities
// a person would write: bytes in binary SI (512Mi, 16Gi), everything else
// in decimal SI (500m, 4). Messages and statuses use it so that an amount of
// memory does not read as a raw count of bytes.
package quantity

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// batchMemory is the memory the colocation agent offers offline pods
// (pkg/agent/qos), in bytes like memory itself.
const batchMemory corev1.ResourceName = "kubernetes.io/batch-memory"

// IsBytes reports whether amounts of the resource are bytes: memory,
// ephemeral-storage, hugepages-<size> and kubernetes.io/batch-memory. Not
// volcano.sh/gpu-memory, which counts MiB.
func IsBytes(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage, batchMemory:
		return true
	}
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// Bytes is an amount of bytes: in binary SI when it is a whole number of
// KiB (16Gi), else in decimal SI (1G rather than 1000000000).
func Bytes(v int64) *resource.Quantity {
	if v%1024 == 0 {
		return resource.NewQuantity(v, resource.BinarySI)
	}
	return resource.NewQuantity(v, resource.DecimalSI)
}

// Milli is an amount of the resource given in thousandths of its unit (of
// a byte, for the resources IsBytes names): whole units as Bytes or as a
// decimal number, fractions in milli-units (500m).
func Milli(name corev1.ResourceName, milli int64) *resource.Quantity {
	switch {
	case milli%1000 != 0:
		return resource.NewMilliQuantity(milli, resource.DecimalSI)
	case IsBytes(name):
		return Bytes(milli / 1000)
	default:
		return resource.NewQuantity(milli/1000, resource.DecimalSI)
	}
}

// MaxExponent bounds the decimal exponent Parse takes (1e100 and 1e-100):
// far past any real amount, and far from the exponents that make
// apimachinery's ParseQuantity compute without end (beyond an int32 it
// truncates them, and near the truncated bounds it builds ever larger
// numbers).
const MaxExponent = 100

// Parse reads a quantity a person typed, as resource.ParseQuantity does,
// but refuses a decimal exponent (1e3, 5E-2) beyond MaxExponent instead of
// handing it on.
func Parse(s string) (resource.Quantity, error) {
	if i := strings.IndexAny(s, "eE"); i > 0 {
		exp := strings.TrimLeft(s[i+1:], "+-")
		if exp != "" && strings.Trim(exp, "0123456789") == "" {
			digits := strings.TrimLeft(exp, "0")
			if len(digits) > 3 || (digits != "" && atoi(digits) > MaxExponent) {
				return resource.Quantity{}, fmt.Errorf("quantity %q: the exponent is beyond %d", s, MaxExponent)
			}
		}
	}
	return resource.ParseQuantity(s)
}

// atoi reads at most three decimal digits.
func atoi(digits string) int {
	n := 0
	for _, c := range digits {
		n = n*10 + int(c-'0')
	}
	return n
}

// CompareNames orders resource names as people read them: cpu, memory,
// then the rest by name.
func CompareNames(a, b corev1.ResourceName) int {
	rank := func(s corev1.ResourceName) int {
		switch s {
		case corev1.ResourceCPU:
			return 0
		case corev1.ResourceMemory:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(string(a), string(b))
}

// SortedNames are the resource names of the lists, each once, in
// CompareNames order.
func SortedNames(lists ...corev1.ResourceList) []corev1.ResourceName {
	seen := map[corev1.ResourceName]bool{}
	var names []corev1.ResourceName
	for _, rl := range lists {
		for n := range rl {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	slices.SortFunc(names, CompareNames)
	return names
}
