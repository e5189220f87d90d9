// Package component gives every Caldera server binary (caldera-scheduler,
// caldera-controller-manager, caldera-webhook, caldera-agent,
// caldera-global) the same command: its flags are its options' and
// klog's, and running it completes the options, validates them, turns
// them into the component's configuration and runs that.
package component

import (
	"flag"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
)

// Options are a component's flags; C is the configuration they make.
type Options[C any] interface {
	// AddFlags registers the flags, their defaults being the options'
	// values.
	AddFlags(fs *pflag.FlagSet)
	// Complete fills in what the flags leave to be derived: defaults from
	// the environment, values that depend on other flags, files the flags
	// name.
	Complete() error
	// Validate checks the completed options; every error names its flag.
	Validate() field.ErrorList
	// Config returns what the component runs with, from completed and
	// valid options.
	Config() (C, error)
}

// NewCommand returns the command of the component name, which short
// describes. It takes no arguments; its flags are o's and klog's. Running
// it configures o (see Configure) and calls run with the configuration.
// The command prints no error itself: Execute returns it, and the main
// function prints it once.
func NewCommand[C any](name, short string, o Options[C], run func(C) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:           name,
		Short:         short,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := Configure(o)
			if err != nil {
				return err
			}
			return run(c)
		},
	}
	o.AddFlags(cmd.Flags())
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	cmd.Flags().AddGoFlagSet(klogFlags)
	return cmd
}

// Configure completes and validates o and returns its configuration, as
// the component's command does before running it; for callers that set
// the options in code. Validation errors come back together, as a
// utilerrors.Aggregate of *field.Error.
func Configure[C any](o Options[C]) (C, error) {
	var zero C
	if err := o.Complete(); err != nil {
		return zero, err
	}
	if errs := o.Validate(); len(errs) > 0 {
		return zero, invalidFlags{errs.ToAggregate()}
	}
	return o.Config()
}

// invalidFlags prints the errors of the flags one a line, each beginning
// with its flag.
type invalidFlags struct {
	utilerrors.Aggregate
}

func (e invalidFlags) Error() string {
	errs := e.Errors()
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}
