package config

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// workerServices are the compose services running trawler-worker, one per role.
var workerServices = []string{RoleWorkflow, RoleFetch, RoleProcess, RoleRender}

// docker-compose.yml cannot run here (no Docker engine). It is loaded as Docker Compose loads
// it (the Compose specification's own library: schema, anchors, interpolation), and what can
// be checked without an engine is.
func TestDockerComposeAsShipped(t *testing.T) {
	// No password ships: without them set, compose refuses to start, naming them.
	for _, v := range []string{"TRAWLER_PG_PASSWORD", "TRAWLER_S3_SECRET_KEY", "GRAFANA_ADMIN_PASSWORD"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	bare, err := cli.NewProjectOptions([]string{"../../docker-compose.yml"}, cli.WithWorkingDirectory("../.."), cli.WithName("trawler"), cli.WithOsEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ProjectFromOptions(context.Background(), bare); err == nil || !strings.Contains(err.Error(), "TRAWLER_PG_PASSWORD") {
		t.Errorf("docker-compose.yml loads without its passwords set: %v", err)
	}
	t.Setenv("TRAWLER_PG_PASSWORD", "pg-test-password")
	t.Setenv("TRAWLER_S3_SECRET_KEY", "s3-test-secret")
	t.Setenv("GRAFANA_ADMIN_PASSWORD", "grafana-test-password")
	opts, err := cli.NewProjectOptions([]string{"../../docker-compose.yml"}, cli.WithWorkingDirectory("../.."),
		cli.WithName("trawler"), cli.WithOsEnv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cli.ProjectFromOptions(context.Background(), opts)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	if got := p.Services["postgresql"].Environment["POSTGRES_PASSWORD"]; got == nil || *got != "pg-test-password" {
		t.Errorf("postgresql's password is %v, not the one set", got)
	}
	for _, name := range append([]string{"postgresql", "postgresql-standby", "temporal-schema", "temporal-1", "temporal-namespace",
		"temporal-ui", "minio-1", "trawler-setup", "prometheus", "grafana"}, workerServices...) {
		if _, ok := p.Services[name]; !ok {
			t.Errorf("service %q missing", name)
		}
	}
	// The services that start sandboxed children (Chromium, PDF readers: user and network
	// namespaces) run under the repository's profile, the others under Docker's default; none
	// is unconfined.
	const profile = "seccomp=./deploy/seccomp/sandboxed.json"
	for name, s := range p.Services {
		sandboxes := name == RoleRender || name == RoleProcess
		if got := strings.Join(s.SecurityOpt, " "); (got == profile) != sandboxes || strings.Contains(got, "unconfined") {
			t.Errorf("service %s: security_opt %v (want %q only for the render and process services, nothing unconfined)", name, s.SecurityOpt, profile)
		}
	}
	checkSeccompProfile(t, "../../deploy/seccomp/sandboxed.json")
	// Images: pinned tags that name a release, no auto-setup; Trawler's own built here.
	for name, s := range p.Services {
		repo, tag, _ := strings.Cut(s.Image, ":")
		switch {
		case s.Build != nil:
			if _, err := os.Stat("../../" + s.Build.Dockerfile); s.Build.Dockerfile != "" && err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case tag == "" || tag == "latest" || !strings.ContainsAny(tag, "0123456789"):
			t.Errorf("%s: image %q is not pinned to a release", name, s.Image)
		case strings.Contains(repo, "auto-setup"):
			t.Errorf("%s: %s is deprecated; the server image with admin-tools' schema setup replaces it", name, repo)
		}
	}
	// The Temporal server's schema is set up by the admin tools before the server starts.
	if !strings.Contains(strings.Join(p.Services["temporal-schema"].Command, " "), "temporal-sql-tool") {
		t.Error("temporal-schema does not run temporal-sql-tool")
	}
	for name, svc := range p.Services {
		if strings.HasPrefix(name, "temporal-") && svc.Image == p.Services["temporal-1"].Image {
			if dep := svc.DependsOn["temporal-schema"]; dep.Condition != types.ServiceConditionCompletedSuccessfully {
				t.Errorf("%s starts before its schema is set up (%+v)", name, dep)
			}
			// Its dynamic configuration is ours (eager starts, long host workflow IDs), mounted
			// where the image is told to read it.
			path := svc.Environment["DYNAMIC_CONFIG_FILE_PATH"]
			mounted := false
			for _, v := range svc.Volumes {
				mounted = mounted || (path != nil && v.Target == *path && strings.HasSuffix(v.Source, "deploy/temporal/dynamicconfig.yaml"))
			}
			if !mounted {
				t.Errorf("%s does not read deploy/temporal/dynamicconfig.yaml (%v, %+v)", name, path, svc.Volumes)
			}
		}
	}
	dyn, err := os.ReadFile("../../deploy/temporal/dynamicconfig.yaml")
	for _, key := range []string{"system.enableEagerWorkflowStart:", "system.enableActivityEagerExecution:", "limit.maxIDLength:", "history.shardIOConcurrency:", "matching.numTaskqueueWritePartitions:"} {
		if err != nil || !strings.Contains(string(dyn), key) {
			t.Errorf("deploy/temporal/dynamicconfig.yaml lacks %s (%v)", key, err)
		}
	}
	// Healthchecks use what each image has: no curl in MinIO's or the server's.
	for _, name := range []string{"postgresql", "postgresql-standby", "temporal-1", "temporal-3", "minio-1", "minio-4"} {
		hc := p.Services[name].HealthCheck
		if hc == nil || len(hc.Test) < 2 {
			t.Errorf("%s has no healthcheck", name)
			continue
		}
		if strings.Contains(strings.Join(hc.Test, " "), "curl") {
			t.Errorf("%s's healthcheck uses curl, which its image lacks: %v", name, hc.Test)
		}
	}

	known := map[string]bool{}
	for _, s := range Settings() {
		known[s.Env] = true
	}
	minio := p.Services["minio-1"].Environment
	for _, name := range append([]string{"trawler-setup"}, workerServices...) {
		s := p.Services[name]
		env := map[string]string{}
		for k, v := range s.Environment {
			if v != nil {
				env[k] = *v
			}
			if !known[k] {
				t.Errorf("%s sets %s, which is not a Trawler setting", name, k)
			}
		}
		if s.Build == nil {
			t.Errorf("%s is not built from the Dockerfile", name)
		}
		if !strings.HasPrefix(env["TEMPORAL_ADDRESS"], "temporal-1:") || !strings.Contains(env["DATABASE_URL"], "@postgresql:") ||
			!strings.HasPrefix(env["TRAWLER_S3_ENDPOINT"], "minio-1:") {
			t.Errorf("%s's addresses do not name the compose services: %v", name, env)
		}
		if *minio["MINIO_ROOT_USER"] != env["TRAWLER_S3_ACCESS_KEY"] || *minio["MINIO_ROOT_PASSWORD"] != env["TRAWLER_S3_SECRET_KEY"] {
			t.Errorf("%s's S3 credentials differ from MinIO's", name)
		}
		if name == "trawler-setup" {
			continue
		}
		// A worker service per role, scalable (`--scale fetch=4`): no fixed name or host port,
		// started once setup is done, metrics on the container's own address.
		if env["TRAWLER_ROLES"] != name {
			t.Errorf("service %s runs roles %q", name, env["TRAWLER_ROLES"])
		}
		if s.ContainerName != "" || len(s.Ports) > 0 {
			t.Errorf("%s cannot be scaled: container_name %q, ports %v", name, s.ContainerName, s.Ports)
		}
		if dep := s.DependsOn["trawler-setup"]; dep.Condition != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("%s starts before trawler setup is done", name)
		}
		if host, _, _ := strings.Cut(env["TRAWLER_METRICS_ADDR"], ":"); host != "0.0.0.0" {
			t.Errorf("%s serves metrics on %q, out of Prometheus's reach", name, env["TRAWLER_METRICS_ADDR"])
		}
	}

	// Prometheus scrapes every replica of every worker service, on the port they serve.
	var prom struct {
		ScrapeConfigs []struct {
			DNS []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	raw, err := os.ReadFile("../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &prom); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	scraped := map[string]int{}
	for _, sc := range prom.ScrapeConfigs {
		for _, d := range sc.DNS {
			for _, n := range d.Names {
				scraped[n] = d.Port
			}
		}
	}
	for _, name := range workerServices {
		var env string
		if v := p.Services[name].Environment["TRAWLER_METRICS_ADDR"]; v != nil {
			env = *v
		}
		if _, port, _ := strings.Cut(env, ":"); scraped[name] == 0 || port != strconv.Itoa(scraped[name]) {
			t.Errorf("Prometheus scrapes %s on port %d; it serves on %q", name, scraped[name], env)
		}
	}
	mounted := false
	for _, v := range p.Services["grafana"].Volumes {
		mounted = mounted || strings.HasSuffix(v.Source, "deploy/grafana/trawler.json")
	}
	if !mounted {
		t.Error("Grafana is not provisioned with deploy/grafana/trawler.json")
	}
	// Published ports are the same as the native stack's, so the README's commands work on both.
	wantPorts := map[string]string{"temporal-1": "7233", "temporal-ui": "8233", "minio-1": "9000", "postgresql": "55432"}
	for svc, port := range wantPorts {
		found := false
		for _, pc := range p.Services[svc].Ports {
			found = found || (pc.HostIP == "127.0.0.1" && pc.Published == port)
		}
		if !found {
			t.Errorf("service %s does not publish 127.0.0.1:%s", svc, port)
		}
	}
}

// checkSeccompProfile reads the sandboxes' seccomp profile: calls it does not name are
// refused; it allows what a Go worker, Chromium's sandbox and a PDF reader's namespace need,
// and none of the calls that reach past a container.
func checkSeccompProfile(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var prof struct {
		DefaultAction string `json:"defaultAction"`
		Syscalls      []struct {
			Names  []string `json:"names"`
			Action string   `json:"action"`
		} `json:"syscalls"`
	}
	if err := json.Unmarshal(raw, &prof); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if prof.DefaultAction != "SCMP_ACT_ERRNO" {
		t.Errorf("%s: default action %q; a call the profile does not name must be refused", path, prof.DefaultAction)
	}
	allowed := map[string]bool{}
	for _, s := range prof.Syscalls {
		for _, n := range s.Names {
			allowed[n] = s.Action == "SCMP_ACT_ALLOW"
		}
	}
	for _, n := range []string{"read", "write", "openat", "mmap", "futex", "epoll_pwait", "socket", "connect", "execve", "clone",
		"clone3", "unshare", "setns", "chroot", "prctl", "seccomp", "setrlimit", "prlimit64"} {
		if !allowed[n] {
			t.Errorf("%s: %s is not allowed (the worker or a sandbox needs it)", path, n)
		}
	}
	for _, n := range []string{"mount", "umount2", "pivot_root", "ptrace", "bpf", "perf_event_open", "kexec_load", "init_module",
		"finit_module", "keyctl", "add_key", "open_by_handle_at", "process_vm_writev", "userfaultfd", "reboot", "swapon", "settimeofday"} {
		if allowed[n] {
			t.Errorf("%s: %s is allowed (it reaches past the container)", path, n)
		}
	}
}
