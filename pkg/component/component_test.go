package component

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testOptions are a component's options with one flag, --size.
type testOptions struct {
	Size     int
	complete error
	// steps records the calls, in order.
	steps []string
}

func (o *testOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Size, "size", o.Size, "a size")
}

func (o *testOptions) Complete() error {
	o.steps = append(o.steps, "Complete")
	return o.complete
}

func (o *testOptions) Validate() field.ErrorList {
	o.steps = append(o.steps, "Validate")
	var errs field.ErrorList
	if o.Size < 1 {
		errs = append(errs, field.Invalid(field.NewPath("--size"), o.Size, "must be at least 1"))
	}
	if o.Size > 10 {
		errs = append(errs, field.Invalid(field.NewPath("--size"), o.Size, "must be at most 10"))
		errs = append(errs, field.Forbidden(field.NewPath("--other"), "needs --size at most 10"))
	}
	return errs
}

func (o *testOptions) Config() (int, error) {
	o.steps = append(o.steps, "Config")
	return o.Size * 2, nil
}

var _ Options[int] = &testOptions{}

func TestNewCommand(t *testing.T) {
	errComplete := errors.New("cannot complete")
	for name, tc := range map[string]struct {
		args      []string
		complete  error
		wantRun   int
		wantErr   string
		wantSteps []string
		// wantFlagErrs are the flag errors of an invalid run.
		wantFlagErrs []string
	}{
		"valid": {
			args:      []string{"--size=3"},
			wantRun:   6,
			wantSteps: []string{"Complete", "Validate", "Config"},
		},
		"one invalid flag": {
			args:         []string{"--size=0"},
			wantErr:      "--size: Invalid value: 0: must be at least 1",
			wantSteps:    []string{"Complete", "Validate"},
			wantFlagErrs: []string{"--size: Invalid value: 0: must be at least 1"},
		},
		"several invalid flags, one a line": {
			args:      []string{"--size=11"},
			wantErr:   "--size: Invalid value: 11: must be at most 10\n--other: Forbidden: needs --size at most 10",
			wantSteps: []string{"Complete", "Validate"},
			wantFlagErrs: []string{
				"--size: Invalid value: 11: must be at most 10",
				"--other: Forbidden: needs --size at most 10",
			},
		},
		"complete fails": {
			args:      []string{"--size=3"},
			complete:  errComplete,
			wantErr:   "cannot complete",
			wantSteps: []string{"Complete"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := &testOptions{Size: 1, complete: tc.complete}
			var ran int
			cmd := NewCommand("test", "a test component", o, func(c int) error {
				ran = c
				return nil
			})
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			var stderr bytes.Buffer
			cmd.SetErr(&stderr)
			err := cmd.Execute()
			if stderr.Len() > 0 {
				t.Errorf("the command printed %q; the error must be printed once, by its caller", stderr.String())
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRun, ran); diff != "" {
				t.Errorf("configuration run (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSteps, o.steps); diff != "" {
				t.Errorf("steps (-want,+got):\n%s", diff)
			}
			var gotFlagErrs []string
			var agg utilerrors.Aggregate
			if errors.As(err, &agg) {
				for _, e := range agg.Errors() {
					var fe *field.Error
					if !errors.As(e, &fe) {
						t.Errorf("%v is not a *field.Error", e)
					}
					gotFlagErrs = append(gotFlagErrs, e.Error())
				}
			}
			if diff := cmp.Diff(tc.wantFlagErrs, gotFlagErrs); diff != "" {
				t.Errorf("flag errors (-want,+got):\n%s", diff)
			}
			if tc.complete != nil && !errors.Is(err, tc.complete) {
				t.Errorf("error %v is not the error of Complete", err)
			}
		})
	}
}

// TestNewCommandFlags: the command has the options' flags with their
// defaults, klog's, and takes no arguments.
func TestNewCommandFlags(t *testing.T) {
	cmd := NewCommand("test", "a test component", &testOptions{Size: 4}, func(int) error { return nil })
	if cmd.Use != "test" || cmd.Short != "a test component" {
		t.Errorf("Use %q, Short %q", cmd.Use, cmd.Short)
	}
	for name, want := range map[string]string{"size": "4", "v": "0", "vmodule": ""} {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("no flag --%s", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s defaults to %q, want %q", name, f.DefValue, want)
		}
	}
	cmd.SetArgs([]string{"extra"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("an argument was accepted")
	}
}
