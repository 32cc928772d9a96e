package config

import (
	"crypto/x509"
	"fmt"
	"os"
)

// TrustCAFile is the ca-file setting: it makes https:// answers signed by the file's
// authorities trusted too (tests trust their test web's with it).
func (c *Config) TrustCAFile(path string) error { return rootCAs(c, path) }

// rootCAs reads extra certificate authorities now, so a bad file stops the process at start.
func rootCAs(c *Config, path string) error {
	c.CAFile, c.RootCAs = path, nil
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	c.RootCAs = pool
	return nil
}
