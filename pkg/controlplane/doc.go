// Package controlplane starts and stops a real Kubernetes control plane on
// loopback from local binaries: etcd, one or more kube-apiservers sharing it
// (each isolated by its own etcd prefix, so one etcd serves several
// clusters), and kwok simulating nodes and pods. The integration and e2e test
// harnesses and the local environment of calderactl are built on it.
//
// Every process is started in its own process group and is killed when the
// process that started it dies, so a crashed test leaves nothing behind.
package controlplane
