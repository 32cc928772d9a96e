package config

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
)

// The README's cluster recipe is what scripts/cluster.sh does: the table and settings between
// its markers are `cluster.sh layout`'s output, byte for byte; and docker-compose.yml runs as
// many nodes of each engine, its workers given every node.
func TestTheClusterRecipeIsTheScripts(t *testing.T) {
	out, err := exec.Command("bash", "../../scripts/cluster.sh", "layout").Output()
	if err != nil {
		t.Fatalf("cluster.sh layout: %v", err)
	}
	layout := strings.TrimSpace(string(out))
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- cluster.sh layout -->\n")
	documented, _, ok2 := strings.Cut(rest, "\n<!-- end cluster.sh layout -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no <!-- cluster.sh layout --> section")
	}
	if documented != layout {
		t.Errorf("README.md's cluster layout differs from `scripts/cluster.sh layout`; paste its output:\n%s", layout)
	}

	count := func(prefix string) int { return strings.Count(layout, "| "+prefix) }
	opts, err := cli.NewProjectOptions([]string{"../../docker-compose.yml"}, cli.WithWorkingDirectory("../.."), cli.WithName("trawler"),
		cli.WithEnv([]string{"TRAWLER_PG_PASSWORD=p", "TRAWLER_S3_SECRET_KEY=k", "GRAFANA_ADMIN_PASSWORD=g"})) // (none ships)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cli.ProjectFromOptions(context.Background(), opts)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	services := func(prefix string) (names []string) {
		for name := range p.Services {
			if strings.HasPrefix(name, prefix) && strings.TrimLeft(strings.TrimPrefix(name, prefix), "0123456789") == "" && name != prefix {
				names = append(names, name)
			}
		}
		return names
	}
	temporal, minio := services("temporal-"), services("minio-")
	if len(temporal) != count("Temporal node") || len(minio) != count("MinIO node") {
		t.Errorf("compose runs %d Temporal and %d MinIO nodes; the script %d and %d", len(temporal), len(minio),
			count("Temporal node"), count("MinIO node"))
	}
	if _, ok := p.Services["postgresql-standby"]; !ok || count("PostgreSQL standby") != 1 {
		t.Errorf("compose has no postgresql-standby beside the script's standby")
	}
	for _, role := range workerServices {
		env := p.Services[role].Environment
		for _, v := range []struct{ name, node string }{{"TEMPORAL_ADDRESS", "temporal-"}, {"TRAWLER_S3_ENDPOINT", "minio-"},
			{"DATABASE_URL", "postgresql"}} {
			val := ""
			if e := env[v.name]; e != nil {
				val = *e
			}
			want := map[string]int{"temporal-": len(temporal), "minio-": len(minio), "postgresql": 2}[v.node]
			if strings.Count(val, v.node) != want {
				t.Errorf("service %s: %s=%q does not name all %d nodes", role, v.name, val, want)
			}
		}
		if e := env["DATABASE_URL"]; e == nil || !strings.Contains(*e, "target_session_attrs=read-write") {
			t.Errorf("service %s: DATABASE_URL does not ask for the node that takes writes", role)
		}
	}
}
