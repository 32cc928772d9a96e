package testweb

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// The test web answers http:// and https:// on one port, as real hosts answer both schemes on
// one name: a connection whose first byte opens a TLS handshake is served over TLS with a
// certificate for the name it asks for, signed by a CA made when the server starts. A crawler
// that trusts CAPEM() reaches https://anything.test/ through the same connect-to rule.

// authority issues leaf certificates for whatever server name a client asks for.
type authority struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    []byte
	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testweb: CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "trawler test web CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testweb: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, leaves: map[string]*tls.Certificate{},
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// leaf returns the certificate for a server name, made on first use.
func (a *authority) leaf(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := hello.ServerName
	if name == "" {
		return nil, errors.New("testweb: TLS without a server name")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.leaves[name]; c != nil {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(a.leaves) + 2)), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	a.leaves[name] = c
	return c, nil
}

// splitListener hands each accepted connection to the plain or the TLS side by its first byte.
type splitListener struct {
	net.Listener
	plain, tls *chanListener
	tlsConfig  *tls.Config
}

func newSplitListener(ln net.Listener, cfg *tls.Config) *splitListener {
	s := &splitListener{Listener: ln, tlsConfig: cfg,
		plain: &chanListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})},
		tls:   &chanListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}}
	go s.run()
	return s
}

func (s *splitListener) run() {
	defer s.plain.close()
	defer s.tls.close()
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			return
		}
		go s.route(c)
	}
}

func (s *splitListener) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		_ = c.Close()
		return
	}
	pc := &peekedConn{Conn: c, r: br}
	if first[0] == 0x16 { // a TLS handshake record
		s.tls.deliver(tls.Server(pc, s.tlsConfig))
		return
	}
	s.plain.deliver(pc)
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// chanListener is a net.Listener fed by splitListener.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func (l *chanListener) deliver(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) close()         { l.once.Do(func() { close(l.done) }) }
func (l *chanListener) Close() error   { l.close(); return nil }
func (l *chanListener) Addr() net.Addr { return l.addr }
