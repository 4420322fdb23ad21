package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

func etcdArgs(dataDir, clientURL, peerURL string) []string {
	return []string{
		"--name=lariat",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=lariat=" + peerURL,
		// A throwaway store does not need durability; skipping fsync makes
		// every write several times faster.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

func apiserverArgs(etcdURL string, port int) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--service-cluster-ip-range=10.0.0.0/16", // room for tens of thousands of Services in long test runs
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// There is no controller manager to create service-account tokens,
		// so this admission plugin would reject every pod.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	}
}

// startProcesses starts etcd, waits for it, then kube-apiserver, and waits
// for it. Callers hold cp.mu or own cp exclusively.
func (cp *ControlPlane) startProcesses(ctx context.Context) error {
	if err := cp.startEtcd(ctx); err != nil {
		return err
	}
	return cp.startAPIServer(ctx)
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	began := time.Now()
	if err := cp.etcd.start(); err != nil {
		return err
	}
	client := &http.Client{Timeout: 2 * time.Second}
	err := cp.waitReady(ctx, cp.etcd, func(ctx context.Context) bool {
		return httpOK(ctx, client, cp.etcdURL+"/health")
	})
	if err != nil {
		return err
	}
	cp.log.WithField("url", cp.etcdURL).Infof("controlplane: etcd ready in %s", time.Since(began).Round(time.Millisecond))
	return nil
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	began := time.Now()
	if err := cp.apiserver.start(); err != nil {
		return err
	}
	transport, err := rest.TransportFor(cp.config)
	if err != nil {
		return fmt.Errorf("controlplane: client transport: %w", err)
	}
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	// /readyz covers etcd and the post-start hooks (RBAC bootstrap roles,
	// CRD informers); the default namespace is created by a controller that
	// may lag behind it, and many callers expect it.
	err = cp.waitReady(ctx, cp.apiserver, func(ctx context.Context) bool {
		return httpOK(ctx, client, cp.apiserverURL+"/readyz") &&
			httpOK(ctx, client, cp.apiserverURL+"/api/v1/namespaces/default")
	})
	if err != nil {
		return err
	}
	cp.log.WithField("url", cp.apiserverURL).Infof("controlplane: kube-apiserver ready in %s", time.Since(began).Round(time.Millisecond))
	return nil
}

// waitReady polls ready until it reports true, the process exits (the error
// then carries its last log lines), the start timeout passes or ctx ends.
func (cp *ControlPlane) waitReady(ctx context.Context, p *process, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, cp.timeout)
	defer cancel()
	exited := p.exitedChan()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		if ready(ctx) {
			return nil
		}
		select {
		case <-exited:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("controlplane: %s not ready after %s: %w; last lines of %s:\n%s",
				p.name, cp.timeout, ctx.Err(), p.logPath, p.tail(20))
		case <-ticker.C:
		}
	}
}

func httpOK(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (cp *ControlPlane) stopProcesses(ctx context.Context) {
	// The API server goes first so it does not log a storm of etcd errors.
	cp.apiserver.stop(ctx, apiserverGrace)
	cp.etcd.stop(ctx, etcdGrace)
}

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after 3 s or
// when ctx ends), keeping etcd and all data, so StartAPIServer can bring it back.
func (cp *ControlPlane) StopAPIServer(ctx context.Context) error {
	return cp.locked(func() error { cp.apiserver.stop(ctx, apiserverGrace); return nil })
}

// StartAPIServer starts kube-apiserver again on the same port and data and
// waits until it is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	return cp.locked(func() error { return cp.startAPIServer(ctx) })
}

// RestartAPIServer stops and starts kube-apiserver; clients keep their
// configuration and reconnect.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	return cp.locked(func() error {
		cp.apiserver.stop(ctx, apiserverGrace)
		return cp.startAPIServer(ctx)
	})
}

// StopEtcd stops etcd (SIGTERM, then SIGKILL after 2 s or when ctx ends),
// keeping its data directory; the API server keeps
// running and fails requests until StartEtcd.
func (cp *ControlPlane) StopEtcd(ctx context.Context) error {
	return cp.locked(func() error { cp.etcd.stop(ctx, etcdGrace); return nil })
}

// StartEtcd starts etcd again on the same ports and data and waits until it
// is healthy.
func (cp *ControlPlane) StartEtcd(ctx context.Context) error {
	return cp.locked(func() error { return cp.startEtcd(ctx) })
}

// RestartEtcd stops and starts etcd on the same data.
func (cp *ControlPlane) RestartEtcd(ctx context.Context) error {
	return cp.locked(func() error {
		cp.etcd.stop(ctx, etcdGrace)
		return cp.startEtcd(ctx)
	})
}

func (cp *ControlPlane) locked(fn func() error) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return ErrStopped
	}
	return fn()
}
