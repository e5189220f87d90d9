// Package pluginargs turns the arguments a plugin factory receives into
// the plugin's typed arguments, defaulted and validated, for the plugins
// whose arguments are one configv1alpha1 type.
package pluginargs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// Typed returns a copy of args, of type *T (nil means the defaults),
// defaulted and validated; errors name the plugin.
func Typed[T any, PT interface {
	*T
	configv1alpha1.PluginArgs
	DeepCopy() *T
}](plugin string, args any) (PT, error) {
	var a PT
	switch v := args.(type) {
	case nil:
		a = new(T)
	case PT:
		a = v.DeepCopy()
	default:
		return nil, fmt.Errorf("plugin %s: arguments of type %T, want %T", plugin, args, a)
	}
	a.Default()
	if errs := a.Validate(field.NewPath("args")); len(errs) > 0 {
		return nil, fmt.Errorf("plugin %s: %w", plugin, errs.ToAggregate())
	}
	return a, nil
}
