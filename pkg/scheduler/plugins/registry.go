// Package plugins lists the scheduler's plugins.
package plugins

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/binpack"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/capacity"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/cdp"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/conformance"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/deviceshare"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/drf"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/networktopologyaware"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/nodegroup"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/nodeorder"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/numaaware"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/overcommit"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/predicates"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/proportion"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/resourcestrategyfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/tasktopology"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/usage"
)

// NewRegistry returns every plugin this build provides.
func NewRegistry() framework.Registry {
	return framework.Registry{
		binpack.Name:              binpack.New,
		capacity.Name:             capacity.New,
		cdp.Name:                  cdp.New,
		conformance.Name:          conformance.New,
		deviceshare.Name:          deviceshare.New,
		drf.Name:                  drf.New,
		gang.Name:                 gang.New,
		networktopologyaware.Name: networktopologyaware.New,
		nodegroup.Name:            nodegroup.New,
		nodeorder.Name:            nodeorder.New,
		numaaware.Name:            numaaware.New,
		overcommit.Name:           overcommit.New,
		predicates.Name:           predicates.New,
		priority.Name:             priority.New,
		proportion.Name:           proportion.New,
		resourcestrategyfit.Name:  resourcestrategyfit.New,
		tasktopology.Name:         tasktopology.New,
		usage.Name:                usage.New,
	}
}
