// Package controlplane starts a real etcd and kube-apiserver on loopback, for
// tests and for local runs, with no downloads: the binaries are built from Go
// modules by scripts/controlplane (`make controlplane`) into a per-user cache.
//
// A control plane has its own temporary directory (etcd data, certificates,
// kubeconfig, logs), free loopback ports, an admin identity and RBAC
// authorization, so several can run at once, one per test package. Its
// processes die with the process that started them, and Stop removes every
// file it wrote.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure Start. The zero value is a working default.
type Options struct {
	// BinDir holds the etcd and kube-apiserver binaries. Empty means
	// DefaultBinDir().
	BinDir string
	// CRDDirs are directories of CRD manifests (YAML or JSON, several
	// documents per file allowed) installed before Start returns; Start waits
	// until each is Established and served by discovery.
	CRDDirs []string
	// APIServerFlags are added after the default kube-apiserver flags; a flag
	// given here overrides the default of the same name.
	APIServerFlags []string
	// EtcdFlags are added after the default etcd flags.
	EtcdFlags []string
	// LogDir receives etcd.log and kube-apiserver.log and is kept after Stop.
	// Empty means a directory inside the control plane's temporary directory,
	// removed by Stop.
	LogDir string
	// StartTimeout bounds how long each process may take to become ready.
	// Zero means 2 minutes, enough for a loaded 2-core machine.
	StartTimeout time.Duration
	// Logger receives progress lines. Nil means logrus's standard logger.
	Logger logrus.FieldLogger
}

// ControlPlane is a running etcd plus kube-apiserver. Its methods are safe for
// concurrent use.
type ControlPlane struct {
	dir            string
	kubeconfigPath string
	config         *rest.Config
	etcdURL        string
	apiserverURL   string
	timeout        time.Duration
	log            logrus.FieldLogger

	mu        sync.Mutex // serializes stop/start of the processes
	etcd      *process
	apiserver *process
	stopped   bool
}

const (
	// tempPrefix starts the name of every control plane's temporary
	// directory; the creator's pid follows, so directories of killed
	// processes can be found and removed.
	tempPrefix = "lariat-controlplane-"
	// portAttempts is how many sets of ports Start tries when one is taken
	// between choosing it and the process binding it.
	portAttempts = 5
	// apiserverGrace is how long kube-apiserver may take to exit after
	// SIGTERM. Idle, it needs about a second; with open watches it waits up
	// to a minute for their clients to go away. It keeps no state of its
	// own (everything it acknowledged is in etcd), so a kill loses nothing.
	apiserverGrace = 3 * time.Second
	// etcdGrace is shorter: etcd waits about 7 s for the API server's watch
	// streams to drain, and a kill loses nothing because every write reached
	// the page cache before it was acknowledged.
	etcdGrace = 2 * time.Second
)

// Start starts etcd and kube-apiserver, waits until the API server is ready,
// installs the CRDs in opts.CRDDirs and returns the running control plane.
// On error nothing is left running and no files are left behind.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	return start(ctx, opts, freePort)
}

// start is Start with the port chooser as a parameter, so tests can force a
// port clash.
func start(ctx context.Context, opts Options, port func() (int, error)) (_ *ControlPlane, err error) {
	binDir := opts.BinDir
	if binDir == "" {
		if binDir, err = DefaultBinDir(); err != nil {
			return nil, err
		}
	}
	etcdPath, err := findBinary(binDir, etcdBinary)
	if err != nil {
		return nil, err
	}
	apiserverPath, err := findBinary(binDir, apiserverBinary)
	if err != nil {
		return nil, err
	}
	removeStaleDirs(os.TempDir())

	cp := &ControlPlane{timeout: opts.StartTimeout, log: opts.Logger}
	if cp.timeout <= 0 {
		cp.timeout = 2 * time.Minute
	}
	if cp.log == nil {
		cp.log = logrus.StandardLogger()
	}
	cp.dir, err = os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("controlplane: create temporary directory: %w", err)
	}
	defer func() {
		if err != nil {
			cp.stop()
		}
	}()
	logDir := opts.LogDir
	if logDir == "" {
		logDir = filepath.Join(cp.dir, "logs")
	}
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("controlplane: create log directory: %w", err)
	}
	creds, err := newCredentials()
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(cp.dir, "pki")
	if err := os.Mkdir(certDir, 0o700); err != nil {
		return nil, err
	}
	certFlags, err := creds.write(certDir)
	if err != nil {
		return nil, err
	}

	for attempt := 1; ; attempt++ {
		ports := make([]int, 3)
		for i := range ports {
			if ports[i], err = port(); err != nil {
				return nil, fmt.Errorf("controlplane: find a free port: %w", err)
			}
		}
		cp.etcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
		cp.apiserverURL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
		cp.etcd = &process{
			name:    etcdBinary,
			path:    etcdPath,
			logPath: filepath.Join(logDir, "etcd.log"),
			args: append(etcdArgs(filepath.Join(cp.dir, "etcd"), cp.etcdURL,
				"http://127.0.0.1:"+strconv.Itoa(ports[1])), opts.EtcdFlags...),
		}
		cp.apiserver = &process{
			name:    apiserverBinary,
			path:    apiserverPath,
			logPath: filepath.Join(logDir, "kube-apiserver.log"),
			args:    append(append(apiserverArgs(cp.etcdURL, ports[2]), certFlags...), opts.APIServerFlags...),
		}
		cp.config = &rest.Config{
			Host: cp.apiserverURL,
			TLSClientConfig: rest.TLSClientConfig{
				CAData:   creds.caCert,
				CertData: creds.adminCert,
				KeyData:  creds.adminKey,
			},
		}
		err = cp.startProcesses(ctx)
		if err == nil {
			break
		}
		clash := cp.etcd.addressInUse() || cp.apiserver.addressInUse()
		cp.stopProcesses(ctx)
		if !clash || attempt == portAttempts || ctx.Err() != nil {
			return nil, err
		}
		cp.log.WithField("attempt", attempt).Info("controlplane: a port was taken, retrying with new ports")
		// The failed etcd may have initialized its data dir for the old
		// peer URL; start the next attempt from an empty one.
		if err := os.RemoveAll(filepath.Join(cp.dir, "etcd")); err != nil {
			return nil, err
		}
	}

	cp.kubeconfigPath = filepath.Join(cp.dir, "kubeconfig")
	if err := writeKubeconfig(cp.kubeconfigPath, cp.config); err != nil {
		return nil, err
	}
	if len(opts.CRDDirs) > 0 {
		if err := InstallCRDs(ctx, cp.config, opts.CRDDirs...); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

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

// Config returns a copy of the admin client configuration.
func (cp *ControlPlane) Config() *rest.Config { return rest.CopyConfig(cp.config) }

// KubeconfigPath returns the kubeconfig file for the admin identity, for
// kubectl and for programs that take --kubeconfig.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfigPath }

// URL returns the API server's https URL.
func (cp *ControlPlane) URL() string { return cp.apiserverURL }

// EtcdURL returns etcd's client URL.
func (cp *ControlPlane) EtcdURL() string { return cp.etcdURL }

// Dir returns the temporary directory holding the control plane's data,
// certificates and kubeconfig; Stop removes it.
func (cp *ControlPlane) Dir() string { return cp.dir }

// PIDs returns the process ids of etcd and kube-apiserver, 0 for a process
// that is not running.
func (cp *ControlPlane) PIDs() (etcd, apiserver int) {
	return cp.etcd.pid(), cp.apiserver.pid()
}

// ErrStopped is returned by methods called after Stop.
var ErrStopped = errors.New("controlplane: stopped")

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

// Stop ends both processes and removes the temporary directory. It is safe to
// call more than once.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return nil
	}
	cp.stopped = true
	return cp.stop()
}

func (cp *ControlPlane) stop() error {
	if cp.apiserver != nil {
		cp.stopProcesses(context.Background())
	}
	if err := os.RemoveAll(cp.dir); err != nil {
		return fmt.Errorf("controlplane: remove %s: %w", cp.dir, err)
	}
	return nil
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	const name = "lariat"
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kubeconfig.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kubeconfig.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	kubeconfig.CurrentContext = name
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		return fmt.Errorf("controlplane: write kubeconfig: %w", err)
	}
	return nil
}

// freePort returns a loopback port that was free a moment ago. Another
// process may take it before the binary binds it; Start retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// removeStaleDirs deletes temporary directories of control planes whose
// creating process is gone (killed before it could call Stop). Its children
// died with it through the parent-death signal; only files remain.
func removeStaleDirs(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

// APIServerLogTail returns up to n last lines of the kube-apiserver log, for
// diagnosing a failed test.
func (cp *ControlPlane) APIServerLogTail(n int) string { return cp.apiserver.tail(n) }
