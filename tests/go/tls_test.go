// TLS on the native port through gocql (both forks): the node requires TLS and a client
// certificate signed by its truststore; the certificates are made here with crypto/x509.
package cairntest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

type issued struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

// issue makes a P-256 certificate from template, signed by parent (self-signed when nil).
func issue(t *testing.T, template *x509.Certificate, parent *issued) issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template.SerialNumber = big.NewInt(time.Now().UnixNano())
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().Add(48 * time.Hour)
	signer, signerKey := template, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return issued{cert, key, der}
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func tlsSession(port int, config *tls.Config) (*gocql.Session, error) {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = port
	cluster.ProtoVersion = 4
	cluster.Timeout = 20 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.DisableInitialHostLookup = true
	cluster.SslOpts = &gocql.SslOptions{Config: config, EnableHostVerification: true}
	return cluster.CreateSession()
}

func TestTLSWithClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "gocql test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	}, nil)
	server := issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "node"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, &ca)
	client := issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "app"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, &ca)
	keyDER, err := x509.MarshalPKCS8PrivateKey(server.key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "ca.crt"), "CERTIFICATE", ca.der)
	writePEM(t, filepath.Join(dir, "node.crt"), "CERTIFICATE", server.der)
	writePEM(t, filepath.Join(dir, "node.key"), "PRIVATE KEY", keyDER)
	cfg := filepath.Join(dir, "cairn.yaml")
	yaml := "client_encryption_options:\n  enabled: true\n" +
		"  certificate: " + filepath.Join(dir, "node.crt") + "\n" +
		"  private_key: " + filepath.Join(dir, "node.key") + "\n" +
		"  require_client_auth: true\n  truststore: " + filepath.Join(dir, "ca.crt") + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	port := startNode(t, "--config", cfg)

	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	withCert := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{{
		Certificate: [][]byte{client.der}, PrivateKey: client.key, Leaf: client.cert,
	}}}
	s, err := tlsSession(port, withCert)
	if err != nil {
		t.Fatalf("gocql over TLS with a client certificate: %v", err)
	}
	var version string
	if err := s.Query(`SELECT release_version FROM system.local`).Scan(&version); err != nil {
		t.Fatalf("SELECT over TLS: %v", err)
	}
	s.Close()
	if version == "" {
		t.Fatal("empty release_version")
	}
	if s, err := tlsSession(port, &tls.Config{RootCAs: roots}); err == nil {
		s.Close()
		t.Fatal("a client without a certificate connected")
	}
}
