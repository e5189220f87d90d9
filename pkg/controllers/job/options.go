package job

import "sigs.k8s.io/controller-runtime/pkg/controller"

func controllerOptions(workers int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: workers}
}
