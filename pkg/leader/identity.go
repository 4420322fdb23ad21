package leader

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// PodNameEnv is the environment variable DefaultIdentity reads first; set it
// from the downward API (fieldRef metadata.name) in the pod spec.
const PodNameEnv = "POD_NAME"

// DefaultIdentity returns the pod's name (PodNameEnv, else the host name)
// followed by "_" and a random suffix. The suffix keeps two processes on
// one host (or a restarted container that reuses its pod's name while its
// predecessor's lease has not expired) from taking each other for the
// holder of the lease.
func DefaultIdentity() (string, error) {
	base := os.Getenv(PodNameEnv)
	if base == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("leader: no %s and no host name for the identity: %w", PodNameEnv, err)
		}
		base = h
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("leader: random identity suffix: %w", err)
	}
	return base + "_" + hex.EncodeToString(b[:]), nil
}
