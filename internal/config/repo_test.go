package config

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docker-compose.yml cannot run here (no Docker engine); check that it agrees with the config.
func TestDockerComposeAgreesWithConfig(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Build       any               `yaml:"build"`
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "minio", "trawler-worker"} {
		if _, ok := compose.Services[name]; !ok {
			t.Errorf("service %q missing", name)
		}
	}
	known := map[string]bool{}
	for _, s := range Settings() {
		known[s.Env] = true
	}
	worker := compose.Services["trawler-worker"]
	if worker.Build == nil {
		t.Error("trawler-worker is not built from the Dockerfile")
	}
	for k := range worker.Environment {
		if !known[k] {
			t.Errorf("trawler-worker sets %s, which is not a Trawler setting", k)
		}
	}
	for _, must := range []string{"TEMPORAL_ADDRESS", "DATABASE_URL", "TRAWLER_S3_ENDPOINT", "TRAWLER_S3_ACCESS_KEY", "TRAWLER_S3_SECRET_KEY"} {
		if worker.Environment[must] == "" {
			t.Errorf("trawler-worker does not set %s", must)
		}
	}
	env := worker.Environment
	if !strings.HasPrefix(env["TEMPORAL_ADDRESS"], "temporal:") || !strings.Contains(env["DATABASE_URL"], "@postgresql:") ||
		!strings.HasPrefix(env["TRAWLER_S3_ENDPOINT"], "minio:") {
		t.Errorf("worker addresses do not name the compose services: %v", env)
	}
	minio := compose.Services["minio"].Environment
	if minio["MINIO_ROOT_USER"] != env["TRAWLER_S3_ACCESS_KEY"] || minio["MINIO_ROOT_PASSWORD"] != env["TRAWLER_S3_SECRET_KEY"] {
		t.Error("worker's S3 credentials differ from MinIO's")
	}
	// Published ports are the same as the native stack's, so the README's commands work on both.
	wantPorts := map[string]string{"temporal": "127.0.0.1:7233:", "temporal-ui": "127.0.0.1:8233:", "minio": "127.0.0.1:9000:", "postgresql": "127.0.0.1:55432:"}
	for svc, prefix := range wantPorts {
		found := false
		for _, p := range compose.Services[svc].Ports {
			found = found || strings.HasPrefix(p, prefix)
		}
		if !found {
			t.Errorf("service %s does not publish %s…", svc, prefix)
		}
	}
	if _, err := os.Stat("../../Dockerfile"); err != nil {
		t.Errorf("Dockerfile: %v", err)
	}
}

// The README's configuration table lists every setting with its environment name and flag.
func TestReadmeDocumentsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, s := range Settings() {
		row := "| `" + s.Env + "` | `--" + s.Flag + "` |"
		if !strings.Contains(readme, row) {
			t.Errorf("README's configuration table has no row starting %q", row)
		}
	}
}
