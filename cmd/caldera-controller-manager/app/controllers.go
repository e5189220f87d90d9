package app

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
)

// controller is one controller the manager can run.
type controller struct {
	name  string
	setup func(mgr ctrl.Manager, o *options.Options) error
}

// controllers lists every controller, in the order they are set up.
func controllers() []controller {
	return []controller{}
}

func controllerNames() []string {
	var names []string
	for _, c := range controllers() {
		names = append(names, c.name)
	}
	return names
}
