package controlplane

// PID returns the process id of the component, so that a benchmark can read
// its CPU time and memory from /proc.
func (c *Component) PID() int { return c.proc.cmd.Process.Pid }

// PID returns the process id of kube-scheduler.
func (k *KubeScheduler) PID() int { return k.proc.cmd.Process.Pid }

// PID returns the process id of kube-apiserver.
func (s *APIServer) PID() int { return s.proc.cmd.Process.Pid }
