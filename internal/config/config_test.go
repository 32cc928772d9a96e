package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/urlnorm"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func load(t *testing.T, kv map[string]string, args ...string) (*Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return Load(fs, args, env(kv))
}

func TestDefaultsMatchLocalStack(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.TemporalAddress != "127.0.0.1:7233" || c.S3Endpoint != "127.0.0.1:9000" ||
		!strings.Contains(c.DatabaseURL, "127.0.0.1:55432") {
		t.Fatalf("defaults do not match scripts/stack.sh: %+v", c)
	}
	if len(c.Roles) != 3 || !c.HasRole(RoleFetch) {
		t.Fatalf("default roles = %v", c.Roles)
	}
	if c.ShutdownTimeout != 30*time.Second {
		t.Fatalf("shutdown timeout = %v", c.ShutdownTimeout)
	}
}

func TestFlagOverridesEnvOverridesDefault(t *testing.T) {
	c, err := load(t, map[string]string{"TRAWLER_FETCH_CONCURRENCY": "50", "TRAWLER_PROCESS_CONCURRENCY": "3"},
		"--fetch-concurrency", "500")
	if err != nil {
		t.Fatal(err)
	}
	if c.FetchConcurrency != 500 {
		t.Errorf("flag did not win: %d", c.FetchConcurrency)
	}
	if c.ProcessConcurrency != 3 {
		t.Errorf("env did not win over default: %d", c.ProcessConcurrency)
	}
}

// A cluster's services are lists: every frontend, every MinIO node.
func TestClusterAddressesAreLists(t *testing.T) {
	c, err := load(t, map[string]string{"TEMPORAL_ADDRESS": "10.0.0.1:7233,10.0.0.2:7233",
		"TRAWLER_S3_ENDPOINT": "10.0.0.1:9000,10.0.0.2:9000,10.0.0.3:9000"})
	if err != nil || c.TemporalAddress != "10.0.0.1:7233,10.0.0.2:7233" || c.S3Endpoint != "10.0.0.1:9000,10.0.0.2:9000,10.0.0.3:9000" {
		t.Fatalf("lists: %+v, %v", c, err)
	}
}

func TestBadValuesNameTheSetting(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env: map[string]string{"TEMPORAL_ADDRESS": "nohost"}, want: "TEMPORAL_ADDRESS"},
		{env: map[string]string{"TRAWLER_FETCH_CONCURRENCY": "-1"}, want: "TRAWLER_FETCH_CONCURRENCY"},
		{env: map[string]string{"TRAWLER_ROLES": "fetch,crawl"}, want: `unknown role "crawl"`},
		{env: map[string]string{"TRAWLER_SHUTDOWN_TIMEOUT": "soon"}, want: "TRAWLER_SHUTDOWN_TIMEOUT"},
		{env: map[string]string{"TRAWLER_S3_BUCKET": "Bad_Bucket"}, want: "TRAWLER_S3_BUCKET"},
		{env: map[string]string{"TRAWLER_CONNECT_TO": "*.test"}, want: "TRAWLER_CONNECT_TO"},
		{env: map[string]string{"DATABASE_URL": "mysql://x"}, want: "DATABASE_URL"},
		{args: []string{"--log-level", "loud"}, want: "--log-level"},
		{args: []string{"--temporal-address", "h:99999"}, want: "--temporal-address"},
		{env: map[string]string{"TEMPORAL_ADDRESS": "a:7233,nohost"}, want: `"nohost"`},
		{env: map[string]string{"TRAWLER_S3_ENDPOINT": "a:9102,,b:9103"}, want: "TRAWLER_S3_ENDPOINT"},
	}
	for _, tc := range cases {
		_, err := load(t, tc.env, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %v args %v: err = %v, want it to mention %q", tc.env, tc.args, err, tc.want)
		}
	}
}

func TestSecretsAreNotEchoed(t *testing.T) {
	_, err := load(t, map[string]string{"DATABASE_URL": "mysql://user:hunter2@db"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v: must fail without echoing the secret", err)
	}
}

func TestConnectTo(t *testing.T) {
	rules, err := ParseConnectTo(" *.test=127.0.0.1:18080 , exact.example=[::1]:8080,*=10.0.0.1:80")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 {
		t.Fatalf("rules = %v", rules)
	}
	for _, tc := range []struct {
		rule int
		host string
		want bool
	}{
		{0, "h0001.test", true}, {0, "a.b.test", true}, {0, "test", false}, {0, "xtest", false},
		{1, "exact.example", true}, {1, "sub.exact.example", false},
		{2, "anything", true},
	} {
		if got := rules[tc.rule].Match(tc.host); got != tc.want {
			t.Errorf("%v.Match(%q) = %v", rules[tc.rule], tc.host, got)
		}
	}
	for _, bad := range []string{"*.test", "=1.2.3.4:80", "a*b=1.2.3.4:80", "*x=1.2.3.4:80", "h=1.2.3.4", "h=1.2.3.4:0"} {
		if _, err := ParseConnectTo(bad); err == nil {
			t.Errorf("ParseConnectTo(%q) accepted", bad)
		}
	}
}

// The configuration's normalizer follows its settings: by default it drops the tracking
// parameters urlnorm.Default lists and keeps default pages; TRAWLER_DROP_PARAMS and
// TRAWLER_DEFAULT_PAGES change both.
func TestNormalizerFollowsTheSettings(t *testing.T) {
	const u = "http://a.test/dir/index.html?utm_source=x&keep=1&sid=9"
	for _, tc := range []struct {
		kv   map[string]string
		want string
	}{
		{nil, "http://a.test/dir/index.html?keep=1"},
		{map[string]string{"TRAWLER_DROP_PARAMS": "keep", "TRAWLER_DEFAULT_PAGES": "index.html"}, "http://a.test/dir/?sid=9&utm_source=x"},
	} {
		c, err := load(t, tc.kv)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Normalizer().Normalize(u); err != nil || got != tc.want {
			t.Errorf("with %v: %q, %v; want %q", tc.kv, got, err, tc.want)
		}
	}
	if c, _ := load(t, nil); strings.Join(c.DropParams, ",") != strings.Join(urlnorm.Default().DropParams, ",") {
		t.Errorf("TRAWLER_DROP_PARAMS default %v differs from urlnorm.Default() %v", c.DropParams, urlnorm.Default().DropParams)
	}
}

func TestSecretsComeFromFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "s3")
	_ = os.WriteFile(secret, []byte("from-a-file\n"), 0o600)
	env := map[string]string{"TRAWLER_S3_SECRET_KEY_FILE": secret, "TRAWLER_API_TOKEN_FILE": filepath.Join(dir, "missing")}
	_, err := Load(nil, nil, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "TRAWLER_API_TOKEN_FILE") {
		t.Fatalf("a missing secret file: %v", err)
	}
	delete(env, "TRAWLER_API_TOKEN_FILE")
	c, err := Load(nil, nil, func(k string) string { return env[k] })
	if err != nil || c.S3SecretKey != "from-a-file" {
		t.Fatalf("secret from file: %q %v", c.S3SecretKey, err)
	}
	env["TRAWLER_USER_AGENT_FILE"] = secret // only secrets read files
	if c, _ := Load(nil, nil, func(k string) string { return env[k] }); c.UserAgent == "from-a-file" {
		t.Error("a non-secret setting read a _FILE")
	}
}
