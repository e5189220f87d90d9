package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopTimeout is how long a process may take to exit after SIGTERM before it
// is killed.
const stopTimeout = 10 * time.Second

// process is a child process whose output goes to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
	// bin, args and logDir start it again.
	bin    string
	args   []string
	logDir string
}

// startProcess starts bin with args, logging stdout and stderr to
// <logDir>/<name>.log.
func startProcess(name, bin string, args []string, logDir string) (*process, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group, so stop reaches anything the process starts;
		// killed with the parent, so a crashed test leaves nothing behind.
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{}), bin: bin, args: args, logDir: logDir}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, with its error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, waits up to stopTimeout, then
// kills it. Stopping an exited process is a no-op.
func (p *process) stop() error {
	if p == nil {
		return nil
	}
	if done, _ := p.exited(); done {
		return nil
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not stop within %s and was killed", p.name, stopTimeout)
}

// failure describes an unexpected exit with the tail of the log.
func (p *process) failure(err error) error {
	return fmt.Errorf("%s exited: %v; last log lines:\n%s", p.name, err, Tail(p.logPath, 20))
}

// Tail returns the last n lines of a file (a component's log, say), for
// error messages.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := 0
	i := len(b)
	for i > 0 {
		i--
		if b[i] == '\n' {
			lines++
			if lines > n {
				i++
				break
			}
		}
	}
	return string(b[i:])
}

// waitFor polls check until it returns true, the process exits, or ctx ends.
func waitFor(ctx context.Context, p *process, what string, check func() error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		if done, err := p.exited(); done {
			return p.failure(err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last answer: %v); last log lines of %s:\n%s", what, context.Cause(ctx), last, p.name, Tail(p.logPath, 20))
		case <-tick.C:
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// onFreePorts starts a component, again up to twice more when it failed
// because a port found free was taken before the process bound it: a port
// is free only for the moment it is looked at, and on a machine running
// other control planes, or opening connections (which take ports from the
// same range), another may take it in between.
func onFreePorts[T any](start func() (T, error)) (T, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		v, err := start()
		if err == nil || attempt == attempts || !strings.Contains(err.Error(), "address already in use") {
			return v, err
		}
	}
}

// portOrFree returns port, or a free port when port is 0.
func portOrFree(port int) (int, error) {
	if port != 0 {
		return port, nil
	}
	return freePort()
}

func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// findBinary returns the path of name in dir, checking that it is executable.
func findBinary(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s not found in %s: build the control-plane binaries with hack/build-control-plane.sh (make test and make run do it)", name, dir)
		}
		return "", err
	}
	if st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable", p)
	}
	return p, nil
}

// kill sends SIGKILL to the process group and waits for the process.
func (p *process) kill() {
	if done, _ := p.exited(); done {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// restart kills the process if it still runs and starts it again with the
// same arguments, its output appended to the same log.
func (p *process) restart() (*process, error) {
	p.kill()
	return startProcess(p.name, p.bin, p.args, p.logDir)
}

// signal sends sig to the process group (SIGSTOP pauses it as a hung or
// starved process, SIGCONT resumes it, SIGHUP asks it to reload).
func (p *process) signal(sig syscall.Signal) error {
	if done, _ := p.exited(); done {
		return fmt.Errorf("%s has exited", p.name)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("signalling %s: %w", p.name, err)
	}
	return nil
}
