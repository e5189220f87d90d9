package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// pollInterval is how often --wait reads the job.
const pollInterval = 500 * time.Millisecond

// waitOptions are the --wait and --timeout flags of a job verb.
type waitOptions struct {
	wait    bool
	timeout time.Duration
}

func (o *waitOptions) addFlags(cmd *cobra.Command, until string) {
	cmd.Flags().BoolVar(&o.wait, "wait", false, "wait until "+until)
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long --wait waits")
}

// goal says, of a job's phase, whether waiting is over and, if the job
// cannot reach what was waited for any more, why.
type goal func(j *batchv1alpha1.Job) (done bool, err error)

// ended reports the phases in which a job stays.
func ended(p batchv1alpha1.JobPhase) bool {
	switch p {
	case batchv1alpha1.JobCompleted, batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated, batchv1alpha1.JobAborted:
		return true
	}
	return false
}

// runningOrEnded is run's goal: the job Running, or ended; Completed is a
// success, the other ends are errors. A job that is resumed leaves Aborted
// on its way to Running, so resume does not take Aborted for an end.
func runningOrEnded(abortedEnds bool) goal {
	return func(j *batchv1alpha1.Job) (bool, error) {
		p := j.Status.State.Phase
		switch {
		case p == batchv1alpha1.JobRunning || p == batchv1alpha1.JobCompleted:
			return true, nil
		case p == batchv1alpha1.JobAborted && !abortedEnds:
			return false, nil
		case ended(p):
			return true, endedError(j)
		}
		return false, nil
	}
}

// aborted is suspend's goal: the job Aborted; a job that ends otherwise
// first is an error.
func aborted(j *batchv1alpha1.Job) (bool, error) {
	switch p := j.Status.State.Phase; {
	case p == batchv1alpha1.JobAborted:
		return true, nil
	case ended(p):
		return true, endedError(j)
	}
	return false, nil
}

func endedError(j *batchv1alpha1.Job) error {
	st := j.Status.State
	msg := fmt.Sprintf("job %s/%s is %s", j.Namespace, j.Name, st.Phase)
	switch {
	case st.Reason != "" && st.Message != "":
		msg += fmt.Sprintf(" (%s: %s)", st.Reason, st.Message)
	case st.Reason != "" || st.Message != "":
		msg += fmt.Sprintf(" (%s%s)", st.Reason, st.Message)
	}
	return errors.New(msg)
}

// waitFor reads the job every pollInterval until g says it is done, and
// returns the job as last read. On timeout the error names the phase last
// seen.
func (o *waitOptions) waitFor(ctx context.Context, c client.Client, key client.ObjectKey, want string, g goal) (*batchv1alpha1.Job, error) {
	j := &batchv1alpha1.Job{}
	var goalErr, readErr error
	// Reads use ctx, not the poll's context, which would fail the last
	// read before the timeout instead of letting the timeout say so.
	err := wait.PollUntilContextTimeout(ctx, pollInterval, o.timeout, true, func(context.Context) (bool, error) {
		// A failed read is tried again on the next tick; the timeout
		// error says what the last one was.
		if readErr = c.Get(ctx, key, j); readErr != nil {
			if apierrors.IsNotFound(readErr) {
				return false, fmt.Errorf("job %s was deleted while waiting for it to be %s", key, want)
			}
			return false, nil
		}
		done, err := g(j)
		goalErr = err
		return done, nil
	})
	switch {
	case ctx.Err() != nil:
		return j, ctx.Err()
	case wait.Interrupted(err):
		return j, timedOut(o.timeout, fmt.Sprintf("job %s to be %s", key, want), j, readErr)
	case err != nil:
		return j, err
	}
	return j, goalErr
}

// timedOut says what was waited for, the phase last seen and, if the last
// read failed, why.
func timedOut(timeout time.Duration, what string, j *batchv1alpha1.Job, readErr error) error {
	msg := fmt.Sprintf("timed out after %s waiting for %s; its phase is %s", timeout, what, phaseOf(j))
	if readErr != nil {
		msg += fmt.Sprintf(" (the last read failed: %v)", readErr)
	}
	return errors.New(msg)
}

// waitGone waits until the job no longer exists. On timeout the error
// names the phase last seen.
func (o *waitOptions) waitGone(ctx context.Context, c client.Client, key client.ObjectKey) error {
	j := &batchv1alpha1.Job{}
	var readErr error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, o.timeout, true, func(context.Context) (bool, error) {
		readErr = c.Get(ctx, key, j)
		if apierrors.IsNotFound(readErr) {
			readErr = nil
			return true, nil
		}
		return false, nil
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case wait.Interrupted(err):
		return timedOut(o.timeout, fmt.Sprintf("job %s to be deleted", key), j, readErr)
	}
	return err
}

func phaseOf(j *batchv1alpha1.Job) string {
	if p := j.Status.State.Phase; p != "" {
		return string(p)
	}
	return "not set yet"
}
