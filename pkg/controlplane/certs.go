package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"
)

// credentials are the PEM files a control plane needs: a CA, the API server's
// serving certificate, an admin client certificate and the service-account
// signing key pair. client-go's cert helpers only make self-signed
// certificates, and signing leaves with a CA is a few lines of crypto/x509,
// so this is written here rather than pulling in kubeadm's PKI package.
type credentials struct {
	caCert, servingCert, servingKey, adminCert, adminKey []byte
	saPublicKey, saPrivateKey                            []byte
}

// adminUser is the identity of the admin client certificate; the
// system:masters group gives it every permission under RBAC.
const adminUser = "lariat-admin"

func newCredentials() (*credentials, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lariat-controlplane-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("controlplane: create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	servingCert, servingKey, err := signLeaf(ca, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	adminCert, adminKey, err := signLeaf(ca, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: adminUser, Organization: []string{"system:masters"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPrivate, err := keyutil.MarshalPrivateKeyToPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPublicDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	return &credentials{
		caCert:       pemEncode("CERTIFICATE", caDER),
		servingCert:  servingCert,
		servingKey:   servingKey,
		adminCert:    adminCert,
		adminKey:     adminKey,
		saPublicKey:  pemEncode("PUBLIC KEY", saPublicDER),
		saPrivateKey: saPrivate,
	}, nil
}

// signLeaf creates a new key and a certificate for it signed by the CA, both
// PEM-encoded.
func signLeaf(ca *x509.Certificate, caKey crypto.Signer, template *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("controlplane: sign certificate %q: %w", template.Subject.CommonName, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pemEncode("CERTIFICATE", der), keyPEM, nil
}

func pemEncode(blockType string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
}

// write stores every file kube-apiserver reads in dir and returns the flags
// that point it at them.
func (c *credentials) write(dir string) ([]string, error) {
	files := []struct {
		name string
		data []byte
		flag string
	}{
		{"ca.crt", c.caCert, "--client-ca-file"},
		{"apiserver.crt", c.servingCert, "--tls-cert-file"},
		{"apiserver.key", c.servingKey, "--tls-private-key-file"},
		{"sa.pub", c.saPublicKey, "--service-account-key-file"},
		{"sa.key", c.saPrivateKey, "--service-account-signing-key-file"},
	}
	flags := make([]string, 0, len(files))
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			return nil, fmt.Errorf("controlplane: write %s: %w", path, err)
		}
		flags = append(flags, f.flag+"="+path)
	}
	return flags, nil
}
