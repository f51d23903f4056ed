package realnode

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long the cluster's certificates are valid: a
// playground cluster lives days, not years.
const certValidity = 30 * 24 * time.Hour

// identity is one client or server certificate of the cluster.
type identity struct {
	// file is the base name of the .crt and .key files.
	file   string
	cn     string
	groups []string
	server bool
	ips    []net.IP
	dns    []string
}

// ca signs the cluster's certificates.
type ca struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// writePKI writes the cluster's CA, every identity's certificate and key,
// and the service-account signing key pair into dir.
func writePKI(dir string, ids []identity) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	authority, err := newCA()
	if err != nil {
		return err
	}
	if err := writeCert(filepath.Join(dir, "ca"), authority.cert.Raw, authority.key); err != nil {
		return err
	}
	for _, id := range ids {
		der, key, err := authority.issue(id)
		if err != nil {
			return fmt.Errorf("pki: %s: %w", id.file, err)
		}
		if err := writeCert(filepath.Join(dir, id.file), der, key); err != nil {
			return err
		}
	}
	return writeServiceAccountKey(dir)
}

func newCA() (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "deployconfig real-node CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	return &ca{cert: cert, key: key}, nil
}

// issue makes id's certificate signed by the CA.
func (c *ca) issue(id identity) ([]byte, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	usage := x509.ExtKeyUsageClientAuth
	if id.server {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: id.cn, Organization: id.groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  id.ips,
		DNSNames:     id.dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	return der, key, err
}

// writeCert writes base.crt and base.key.
func writeCert(base string, der []byte, key crypto.Signer) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("pki: %s: %w", base, err)
	}
	if err := writePEM(base+".crt", "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(base+".key", "PRIVATE KEY", keyDER)
}

// writeServiceAccountKey writes the key pair the API server signs and
// checks service-account tokens with (sa.key, sa.pub).
func writeServiceAccountKey(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("pki: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("pki: service-account key: %w", err)
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub)
}

func writePEM(path, kind string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}
