package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// KubernetesVersion is the kube-apiserver release that scripts/controlplane
// builds. It names the cache directory, so binaries of different releases can
// sit side by side. A unit test keeps it equal to scripts/controlplane/go.mod.
const KubernetesVersion = "v1.36.3"

// EtcdVersion is the etcd server release that scripts/controlplane builds.
const EtcdVersion = "v3.6.16"

// DirEnv names the environment variable that, when set, is the directory
// holding the etcd and kube-apiserver binaries, in place of the per-user cache.
const DirEnv = "LARIAT_CONTROLPLANE_DIR"

// Names of the binaries looked up in the binary directory.
const (
	etcdBinary      = "etcd"
	apiserverBinary = "kube-apiserver"
)

// ErrBinaryNotFound is wrapped by the error Start returns when etcd or
// kube-apiserver is not in the binary directory.
var ErrBinaryNotFound = errors.New("control-plane binary not found")

// DefaultBinDir returns where the control-plane binaries are expected: the
// value of LARIAT_CONTROLPLANE_DIR when set, otherwise
// ${XDG_CACHE_HOME:-$HOME/.cache}/lariat/controlplane/<KubernetesVersion>.
func DefaultBinDir() (string, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("controlplane: no cache directory for the binaries (set %s): %w", DirEnv, err)
	}
	return filepath.Join(cache, "lariat", "controlplane", KubernetesVersion), nil
}

// findBinary returns the path of an executable named name in dir, or an error
// that names both the directory and the command that fills it.
func findBinary(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	info, err := os.Stat(path)
	if err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
		return path, nil
	}
	return "", fmt.Errorf("controlplane: %w: %s is not an executable in %s; run 'make controlplane' in the Lariat repository to build it (or set %s to a directory that holds etcd and kube-apiserver)",
		ErrBinaryNotFound, name, dir, DirEnv)
}
