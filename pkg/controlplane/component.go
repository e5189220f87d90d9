package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"syscall"
	"time"
)

// ComponentOptions configure a Caldera component run as a process.
type ComponentOptions struct {
	// Name names the log file.
	Name string
	// Binary is the path of the executable.
	Binary string
	Args   []string
	// Dir holds the log.
	Dir string
	// ReadyURL, when set, is polled until it answers 200.
	ReadyURL string
	// StartTimeout bounds the wait; 0 means 60s.
	StartTimeout time.Duration
}

// Component is a running component.
type Component struct {
	proc *process
	opts ComponentOptions
}

// StartComponent starts a component and waits until it is ready.
func StartComponent(ctx context.Context, o ComponentOptions) (*Component, error) {
	p, err := startProcess(o.Name, o.Binary, o.Args, o.Dir)
	if err != nil {
		return nil, err
	}
	if o.ReadyURL != "" {
		timeout := o.StartTimeout
		if timeout == 0 {
			timeout = 60 * time.Second
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		client := &http.Client{Timeout: 2 * time.Second}
		if err := waitFor(wctx, p, o.Name+" readiness", func() error { return httpOK(client, o.ReadyURL) }); err != nil {
			_ = p.stop()
			return nil, fmt.Errorf("starting %s: %w", o.Name, err)
		}
	}
	return &Component{proc: p, opts: o}, nil
}

// Name is the component's name (its log file's).
func (c *Component) Name() string { return c.opts.Name }

// ReadyURL is the URL that answers 200 while the component is ready ("" if
// it has none).
func (c *Component) ReadyURL() string { return c.opts.ReadyURL }

// Restart starts the component again, with the arguments it was first
// started with, once its process is gone (killing it if it is not), as a
// kubelet restarts a container that crashed, and waits until it is ready.
// Its log continues in the same file.
func (c *Component) Restart(ctx context.Context) error {
	c.proc.kill()
	n, err := StartComponent(ctx, c.opts)
	if err != nil {
		return err
	}
	c.proc = n.proc
	return nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) { return freePort() }

// Stop stops the component.
func (c *Component) Stop() error {
	if c == nil {
		return nil
	}
	return c.proc.stop()
}

// Kill kills the component at once (SIGKILL), as a crash would, and waits
// for it to be gone.
func (c *Component) Kill() {
	if c == nil {
		return
	}
	c.proc.kill()
}

// Signal sends sig to the component's process group.
func (c *Component) Signal(sig syscall.Signal) error { return c.proc.signal(sig) }

// Exited reports whether the component's process has ended (a component
// that lost its leader lease exits, for one).
func (c *Component) Exited() bool {
	done, _ := c.proc.exited()
	return done
}

// LogPath is the component's log file.
func (c *Component) LogPath() string { return c.proc.logPath }
