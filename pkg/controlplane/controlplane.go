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
	files := startFiles{etcdPath: etcdPath, apiserverPath: apiserverPath, logDir: logDir}
	if files.creds, files.certFlags, err = cp.writeCredentials(); err != nil {
		return nil, err
	}
	if err := cp.startOnFreePorts(ctx, opts, port, files); err != nil {
		return nil, err
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

// startFiles are what a control plane's processes are started from.
type startFiles struct {
	etcdPath, apiserverPath string
	logDir                  string
	creds                   *credentials
	certFlags               []string // kube-apiserver's flags naming creds' files
}

// writeCredentials makes the control plane's certificates and keys and
// writes them under its directory; it returns them with kube-apiserver's
// flags naming their files.
func (cp *ControlPlane) writeCredentials() (*credentials, []string, error) {
	creds, err := newCredentials()
	if err != nil {
		return nil, nil, err
	}
	certDir := filepath.Join(cp.dir, "pki")
	if err := os.Mkdir(certDir, 0o700); err != nil {
		return nil, nil, err
	}
	certFlags, err := creds.write(certDir)
	if err != nil {
		return nil, nil, err
	}
	return creds, certFlags, nil
}

// startOnFreePorts starts etcd and kube-apiserver on ports chosen by port,
// with new ones when a port was taken between choosing it and the process
// binding it (up to portAttempts times).
func (cp *ControlPlane) startOnFreePorts(ctx context.Context, opts Options, port func() (int, error), files startFiles) error {
	for attempt := 1; ; attempt++ {
		ports := make([]int, 3)
		for i := range ports {
			var err error
			if ports[i], err = port(); err != nil {
				return fmt.Errorf("controlplane: find a free port: %w", err)
			}
		}
		cp.etcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
		cp.apiserverURL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
		cp.etcd = &process{
			name:    etcdBinary,
			path:    files.etcdPath,
			logPath: filepath.Join(files.logDir, "etcd.log"),
			args: append(etcdArgs(filepath.Join(cp.dir, "etcd"), cp.etcdURL,
				"http://127.0.0.1:"+strconv.Itoa(ports[1])), opts.EtcdFlags...),
		}
		cp.apiserver = &process{
			name:    apiserverBinary,
			path:    files.apiserverPath,
			logPath: filepath.Join(files.logDir, "kube-apiserver.log"),
			args:    append(append(apiserverArgs(cp.etcdURL, ports[2]), files.certFlags...), opts.APIServerFlags...),
		}
		cp.config = &rest.Config{
			Host: cp.apiserverURL,
			TLSClientConfig: rest.TLSClientConfig{
				CAData:   files.creds.caCert,
				CertData: files.creds.adminCert,
				KeyData:  files.creds.adminKey,
			},
		}
		err := cp.startProcesses(ctx)
		if err == nil {
			return nil
		}
		clash := cp.etcd.addressInUse() || cp.apiserver.addressInUse()
		cp.stopProcesses(ctx)
		if !clash || attempt == portAttempts || ctx.Err() != nil {
			return err
		}
		cp.log.WithField("attempt", attempt).Info("controlplane: a port was taken, retrying with new ports")
		// The failed etcd may have initialized its data dir for the old
		// peer URL; start the next attempt from an empty one.
		if err := os.RemoveAll(filepath.Join(cp.dir, "etcd")); err != nil {
			return err
		}
	}
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
