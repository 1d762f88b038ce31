package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/phasegate/phasegate/schemas"
)

// The deploy files are what an operator copies: deploy/compose.yaml must be
// a Compose file (the Compose Specification's schema, pinned in testdata;
// no Docker engine here), and both it and deploy/kubernetes/ (which
// kubeconform checks in .ci/run) must run the release's image with
// variables serve reads, the secrets as files, and the health endpoints
// serve has.

// release is the image a release publishes (.goreleaser.yaml) at the
// version the snippets and docs name.
var release = "ghcr.io/phasegate/phasegate:" + schemas.Version

// serveHelp is `phasegate serve -h` as the CLI's golden has it: every
// variable serve reads is named there.
func serveHelp(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "internal", "cli", "testdata", "help", "serve.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// yamlToJSON decodes one YAML document as JSON would (numbers as
// json.Number, for the schema validator).
func yamlToJSON(t *testing.T, doc any) any {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type composeFile struct {
	Services map[string]struct {
		Image       string                  `yaml:"image"`
		Command     []string                `yaml:"command"`
		Deploy      struct{ Replicas int }  `yaml:"deploy"`
		Environment map[string]string       `yaml:"environment"`
		Secrets     []string                `yaml:"secrets"`
		Ports       []string                `yaml:"ports"`
		ReadOnly    bool                    `yaml:"read_only"`
		CapDrop     []string                `yaml:"cap_drop"`
		User        string                  `yaml:"user"`
		Healthcheck struct{ Test []string } `yaml:"healthcheck"`
	} `yaml:"services"`
	Secrets map[string]struct{ File string } `yaml:"secrets"`
}

func TestDeployCompose(t *testing.T) {
	t.Parallel()
	path := filepath.Join(repoRoot, "deploy", "compose.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := composeSchema(t).Validate(yamlToJSON(t, doc)); err != nil {
		t.Errorf("%s is not a Compose file: %v", path, err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	serve, redis := c.Services["phasegate"], c.Services["redis"]
	if serve.Image != release || !slices.Equal(serve.Command, []string{"serve"}) || serve.Deploy.Replicas != 2 {
		t.Errorf("phasegate: image %q, command %q, %d replicas; want %s, serve, 2", serve.Image, serve.Command, serve.Deploy.Replicas, release)
	}
	if !slices.Equal(serve.Healthcheck.Test, []string{"CMD", "/phasegate", "serve", "--probe"}) || len(redis.Healthcheck.Test) == 0 {
		t.Errorf("health checks: phasegate %q, redis %q", serve.Healthcheck.Test, redis.Healthcheck.Test)
	}
	if serve.Environment["PHASEGATE_REDIS_URL"] != "redis://redis:6379/0" {
		t.Errorf("PHASEGATE_REDIS_URL %q: want the redis service", serve.Environment["PHASEGATE_REDIS_URL"])
	}
	if !serve.ReadOnly || !slices.Equal(serve.CapDrop, []string{"ALL"}) || serve.User != "65532:65532" {
		t.Errorf("phasegate runs read_only %v, cap_drop %q, user %q; want true, ALL, distroless's 65532", serve.ReadOnly, serve.CapDrop, serve.User)
	}
	// Each secret is a file of the compose secrets, where serve is told
	// to read it.
	for _, name := range serve.Secrets {
		if c.Secrets[name].File == "" {
			t.Errorf("secret %s has no file", name)
		}
	}
	for v, secret := range map[string]string{"PHASEGATE_PRIVATE_KEY_FILE": "phasegate_private_key", "PHASEGATE_WEBHOOK_SECRET_FILE": "phasegate_webhook_secret"} {
		if serve.Environment[v] != "/run/secrets/"+secret || !slices.Contains(serve.Secrets, secret) {
			t.Errorf("%s = %q: want /run/secrets/%s, a secret of the service", v, serve.Environment[v], secret)
		}
	}
	checkServeVariables(t, path, slices.Collect(maps.Keys(serve.Environment)))
}

// checkServeVariables fails for a PHASEGATE_ variable serve does not read:
// a misspelt one would be ignored, silently.
func checkServeVariables(t *testing.T, path string, names []string) {
	t.Helper()
	help := serveHelp(t)
	for _, name := range names {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(help) {
			t.Errorf("%s sets %s, which serve does not read (phasegate serve -h)", path, name)
		}
	}
}

// composeSchema is the Compose Specification's schema (testdata, from
// compose-go: see testdata/kubernetes-schemas/README.md).
func composeSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "compose-spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("compose_spec.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("compose_spec.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kubeObject is what TestDeployKubernetes reads of a manifest.
type kubeObject struct {
	Kind     string                `yaml:"kind"`
	Metadata struct{ Name string } `yaml:"metadata"`
	Spec     struct {
		Replicas int `yaml:"replicas"`
		Template struct {
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot   bool                  `yaml:"runAsNonRoot"`
					SeccompProfile struct{ Type string } `yaml:"seccompProfile"`
				} `yaml:"securityContext"`
				Containers []kubeContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type kubeContainer struct {
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name string `yaml:"name"`
	} `yaml:"env"`
	LivenessProbe   kubeProbe `yaml:"livenessProbe"`
	ReadinessProbe  kubeProbe `yaml:"readinessProbe"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool                   `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool                    `yaml:"readOnlyRootFilesystem"`
		RunAsNonRoot             bool                    `yaml:"runAsNonRoot"`
		Capabilities             struct{ Drop []string } `yaml:"capabilities"`
	} `yaml:"securityContext"`
	Resources struct {
		Requests, Limits map[string]string
	} `yaml:"resources"`
}

type kubeProbe struct {
	HTTPGet struct{ Path string } `yaml:"httpGet"`
}

// TestDeployKubernetes: kustomization.yaml lists every manifest, and every
// Deployment runs restricted (the Pod Security Standard's "restricted":
// non-root, no privilege escalation, no capabilities, RuntimeDefault
// seccomp) with a read-only root and resources; phasegate's runs the
// release's image, twice, probed on /healthz and /readyz, with variables
// serve reads. kubeconform checks the schemas (.ci/run).
func TestDeployKubernetes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot, "deploy", "kubernetes")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kustomization struct{ Resources []string }
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err == nil {
		err = yaml.Unmarshal(data, &kustomization)
	}
	if err != nil {
		t.Fatal(err)
	}
	var objects []kubeObject
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		if !slices.Contains(kustomization.Resources, filepath.Base(file)) {
			t.Errorf("%s is not in kustomization.yaml's resources", file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var o kubeObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			objects = append(objects, o)
		}
	}
	kinds := map[string]int{}
	for _, o := range objects {
		kinds[o.Kind+"/"+o.Metadata.Name]++
		if o.Kind == "Deployment" {
			checkPodSpec(t, o)
		}
	}
	for _, want := range []string{"Deployment/phasegate", "Service/phasegate", "PodDisruptionBudget/phasegate", "Deployment/phasegate-redis", "Service/phasegate-redis"} {
		if kinds[want] != 1 {
			t.Errorf("deploy/kubernetes has %d %s, want 1", kinds[want], want)
		}
	}
}

func checkPodSpec(t *testing.T, o kubeObject) {
	t.Helper()
	pod := o.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != "RuntimeDefault" || len(pod.Containers) != 1 {
		t.Errorf("%s: pod securityContext %+v, %d containers; want runAsNonRoot, RuntimeDefault, 1", o.Metadata.Name, pod.SecurityContext, len(pod.Containers))
		return
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || !sc.ReadOnlyRootFilesystem || !sc.RunAsNonRoot || !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("%s: container securityContext %+v; want no privilege escalation, a read-only root, non-root, capabilities drop ALL", o.Metadata.Name, sc)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("%s: resources %+v; want cpu and memory requests, a memory limit", o.Metadata.Name, c.Resources)
	}
	if o.Metadata.Name != "phasegate" {
		return
	}
	if c.Image != release || !slices.Equal(c.Args, []string{"serve"}) || o.Spec.Replicas != 2 {
		t.Errorf("phasegate: image %q, args %q, %d replicas; want %s, serve, 2", c.Image, c.Args, o.Spec.Replicas, release)
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("phasegate: liveness %q, readiness %q; want /healthz, /readyz", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
	}
	checkServeVariables(t, "deploy/kubernetes/deployment.yaml", names)
	if !strings.Contains(strings.Join(names, " "), "PHASEGATE_PRIVATE_KEY_FILE") {
		t.Errorf("phasegate: the private key is not read from a file (env %q)", names)
	}
}
