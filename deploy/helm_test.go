package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"toxgate/internal/testenv"
)

// chartDir is the chart, relative to this package.
const chartDir = "helm/toxgate"

// doc is one rendered Kubernetes object.
type doc = map[string]any

// helm runs Helm's own command with args and returns its output.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := testenv.RequireTool(t, testenv.Helm)
	cmd := exec.Command(bin, args...)
	// Helm keeps caches and settings under these; none of the user's.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// kubeVersion is the Kubernetes version lint and template check against
// (the chart asks for 1.25 or later).
const kubeVersion = "1.33.0"

// valuesFile writes values (YAML) to a file for helm's -f, in a folder
// whose name has no comma (helm splits -f at commas; subtest names have
// them).
func valuesFile(t *testing.T, values string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "toxgate-values-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(p, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// render runs helm template as release toxgate in namespace toxgate and
// returns the objects by "Kind/name".
func render(t *testing.T, values string) map[string]doc {
	t.Helper()
	out, err := helm(t, "template", "toxgate", chartDir, "--namespace", "toxgate", "--kube-version", kubeVersion, "-f", valuesFile(t, values))
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	objs := map[string]doc{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var d doc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, out)
		}
		if d == nil {
			continue
		}
		objs[str(d, "kind")+"/"+str(d, "metadata", "name")] = d
	}
	return objs
}

// at walks a path of map keys and list indexes (ints) in v.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := at(v, path...).(string)
	return s
}

// envOf is the container's environment: name to value, or to
// "secret:<name>/<key>" for a Secret reference.
func envOf(t *testing.T, container any) map[string]string {
	t.Helper()
	out := map[string]string{}
	list, _ := at(container, "env").([]any)
	for _, e := range list {
		name := str(e, "name")
		if ref := at(e, "valueFrom", "secretKeyRef"); ref != nil {
			out[name] = "secret:" + str(ref, "name") + "/" + str(ref, "key")
			continue
		}
		out[name] = str(e, "value")
	}
	return out
}

// The chart passes Helm's lint with its defaults and with a three-replica
// PostgreSQL + S3 setup.
func TestHelmLint(t *testing.T) {
	for _, values := range []string{"{}", multiReplica} {
		if out, err := helm(t, "lint", "--strict", "--kube-version", kubeVersion, chartDir, "-f", valuesFile(t, values)); err != nil {
			t.Errorf("helm lint with %s: %v\n%s", values, err, out)
		}
	}
}

// multiReplica is three gateways on PostgreSQL, files on S3, behind an
// Ingress with TLS.
const multiReplica = `
replicaCount: 3
store:
  type: postgresql
  postgresql: {existingSecret: toxgate-db, key: url}
files:
  backend: s3
  s3: {bucket: tox-files, endpoint: "http://minio:9000", pathStyle: true, existingSecret: toxgate-s3}
admin: {existingSecret: toxgate-admin}
ingress:
  enabled: true
  hosts: [{host: tox.example.org, paths: [{path: /, pathType: Prefix}]}]
  tls: [{secretName: tox-tls, hosts: [tox.example.org]}]
`

// Each values combination renders objects whose probes, security context,
// disruption budget, volumes and Secret references are what the chart
// promises.
func TestHelmTemplate(t *testing.T) {
	cases := []struct {
		name, values string
		replicas     int
		env          map[string]string // expected values; "" means absent
		pvc, ingress bool
	}{
		{name: "defaults: one gateway on the embedded store", values: "{}", replicas: 1, pvc: true,
			env: map[string]string{"TOXGATE_STORE_BACKEND": "", "TOXGATE_MONGODB_URI": "", "TOXGATE_FILES_BACKEND": "dir", "TOXGATE_MODULES_LOAD_WORKERS": "2", "TOXGATE_SERVER_PUBLIC_URL": "", "TOXGATE_DATASTORE_URL": ""}},
		{name: "three gateways on PostgreSQL, S3 files, Ingress", values: multiReplica, replicas: 3, ingress: true,
			env: map[string]string{
				"TOXGATE_STORE_BACKEND":              "postgresql",
				"TOXGATE_STORE_POSTGRES_URL":         "secret:toxgate-db/url",
				"TOXGATE_DATASTORE_URL":              "secret:toxgate-db/url",
				"TOXGATE_FILES_BACKEND":              "s3",
				"TOXGATE_FILES_S3_BUCKET":            "tox-files",
				"TOXGATE_FILES_S3_PATH_STYLE":        "true",
				"TOXGATE_FILES_S3_ACCESS_KEY_ID":     "secret:toxgate-s3/access-key-id",
				"TOXGATE_FILES_S3_SECRET_ACCESS_KEY": "secret:toxgate-s3/secret-access-key",
				"TOXGATE_AUTH_ADMIN_PASSWORD":        "secret:toxgate-admin/admin-password",
				"TOXGATE_SERVER_PUBLIC_URL":          "https://tox.example.org",
				"TOXGATE_MONGODB_URI":                "",
			}},
		{name: "two gateways on a MongoDB replica set, files in it, DataStore on PostgreSQL", replicas: 2,
			values: "replicaCount: 2\nstore: {type: mongodb, mongodb: {existingSecret: mongo, key: uri}}\nfiles: {backend: mongodb}\ndatastore: {existingSecret: ds, key: url}\npublicURL: https://tox.example.org\n",
			env: map[string]string{"TOXGATE_MONGODB_URI": "secret:mongo/uri", "TOXGATE_MONGODB_DATABASE": "toxgate", "TOXGATE_DATASTORE_URL": "secret:ds/url",
				"TOXGATE_STORE_BACKEND": "", "TOXGATE_FILES_BACKEND": "mongodb", "TOXGATE_SERVER_PUBLIC_URL": "https://tox.example.org"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, c.values)
			dep := objs["Deployment/toxgate"]
			if dep == nil {
				t.Fatalf("no Deployment/toxgate among %v", keys(objs))
			}
			if n, _ := at(dep, "spec", "replicas").(int); n != c.replicas {
				t.Errorf("replicas %v, want %d", at(dep, "spec", "replicas"), c.replicas)
			}
			pod := at(dep, "spec", "template", "spec")
			ctr := at(pod, "containers", 0)
			checkProbes(t, ctr)
			checkSecurity(t, pod, ctr)
			if at(ctr, "resources", "requests", "cpu") == nil || at(ctr, "resources", "requests", "memory") == nil || at(ctr, "resources", "limits", "memory") == nil {
				t.Errorf("resources %v: want cpu and memory requests and a memory limit", at(ctr, "resources"))
			}
			env := envOf(t, ctr)
			for k, want := range c.env {
				if got, ok := env[k]; want == "" && ok {
					t.Errorf("env %s = %q, want it unset", k, got)
				} else if want != "" && got != want {
					t.Errorf("env %s = %q, want %q", k, got, want)
				}
			}
			checkPDB(t, objs["PodDisruptionBudget/toxgate"], dep)
			svc := objs["Service/toxgate"]
			if at(svc, "spec", "ports", 0, "port") != 8080 || str(svc, "spec", "ports", 0, "targetPort") != "http" {
				t.Errorf("Service/toxgate ports %v, want 8080 -> http", at(svc, "spec", "ports"))
			}
			_, hasPVC := objs["PersistentVolumeClaim/toxgate-data"]
			if hasPVC != c.pvc {
				t.Errorf("PersistentVolumeClaim present %v, want %v", hasPVC, c.pvc)
			}
			vol := at(pod, "volumes", 0)
			if c.pvc && str(vol, "persistentVolumeClaim", "claimName") != "toxgate-data" {
				t.Errorf("/data volume %v, want the claim toxgate-data", vol)
			}
			if !c.pvc && at(vol, "emptyDir") == nil {
				t.Errorf("/data volume %v, want an emptyDir (the state is in the shared store)", vol)
			}
			ing, hasIngress := objs["Ingress/toxgate"]
			if hasIngress != c.ingress {
				t.Errorf("Ingress present %v, want %v", hasIngress, c.ingress)
			}
			if c.ingress && str(ing, "spec", "rules", 0, "http", "paths", 0, "backend", "service", "name") != "toxgate" {
				t.Errorf("Ingress backend %v, want Service toxgate", at(ing, "spec", "rules"))
			}
		})
	}
}

// checkProbes: liveness on /IsAlive, readiness on /readyz, both on the
// http port the container exposes.
func checkProbes(t *testing.T, ctr any) {
	t.Helper()
	if at(ctr, "ports", 0, "containerPort") != 8080 || str(ctr, "ports", 0, "name") != "http" {
		t.Errorf("container ports %v, want 8080 named http", at(ctr, "ports"))
	}
	for probe, path := range map[string]string{"livenessProbe": "/IsAlive", "readinessProbe": "/readyz", "startupProbe": "/IsAlive"} {
		if got := str(ctr, probe, "httpGet", "path"); got != path {
			t.Errorf("%s path %q, want %q", probe, got, path)
		}
		if got := str(ctr, probe, "httpGet", "port"); got != "http" {
			t.Errorf("%s port %q, want http", probe, got)
		}
	}
}

// checkSecurity: non-root, read-only root file system, no capabilities,
// no privilege escalation; /tmp and /data writable volumes.
func checkSecurity(t *testing.T, pod, ctr any) {
	t.Helper()
	if at(pod, "securityContext", "runAsNonRoot") != true || at(pod, "securityContext", "runAsUser") != 65532 {
		t.Errorf("pod securityContext %v, want runAsNonRoot and runAsUser 65532", at(pod, "securityContext"))
	}
	sc := at(ctr, "securityContext")
	if at(sc, "readOnlyRootFilesystem") != true || at(sc, "allowPrivilegeEscalation") != false || str(sc, "capabilities", "drop", 0) != "ALL" {
		t.Errorf("container securityContext %v, want a read-only root, no escalation, capabilities dropped", sc)
	}
	mounts := map[string]bool{}
	list, _ := at(ctr, "volumeMounts").([]any)
	for _, m := range list {
		mounts[str(m, "mountPath")] = true
	}
	if !mounts["/data"] || !mounts["/tmp"] {
		t.Errorf("volume mounts %v, want /data and /tmp", list)
	}
}

// checkPDB: a budget letting one pod go at a time, selecting the
// Deployment's pods.
func checkPDB(t *testing.T, pdb, dep doc) {
	t.Helper()
	if pdb == nil {
		t.Fatal("no PodDisruptionBudget/toxgate")
	}
	if at(pdb, "spec", "maxUnavailable") != 1 {
		t.Errorf("PodDisruptionBudget maxUnavailable %v, want 1", at(pdb, "spec", "maxUnavailable"))
	}
	sel, _ := at(pdb, "spec", "selector", "matchLabels").(map[string]any)
	labels, _ := at(dep, "spec", "template", "metadata", "labels").(map[string]any)
	if len(sel) == 0 {
		t.Fatal("PodDisruptionBudget selects nothing")
	}
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("PodDisruptionBudget selects %s=%v, which the pods do not carry (%v)", k, v, labels)
		}
	}
}

// Combinations that cannot work stop the rendering with what to change.
func TestHelmRefuses(t *testing.T) {
	for _, c := range []struct{ values, msg string }{
		{"replicaCount: 3\nfiles: {backend: s3, s3: {bucket: b}}\n", "replicaCount must be 1"},
		{"store: {type: postgresql}\n", "needs store.postgresql.existingSecret"},
		{"store: {type: mongodb}\n", "needs store.mongodb.existingSecret"},
		{"store: {type: mysql}\n", "must be sqlite, postgresql or mongodb"},
		{"replicaCount: 2\nstore: {type: postgresql, postgresql: {existingSecret: db}}\n", "files.backend dir keeps files on one pod's volume"},
		{"files: {backend: s3}\n", "files.backend s3 needs files.s3.bucket"},
		{"replicaCount: 2\nstore: {type: mongodb, mongodb: {existingSecret: m}}\nfiles: {backend: mongodb}\n", "shared DataStore"},
	} {
		out, err := helm(t, "template", "toxgate", chartDir, "--kube-version", kubeVersion, "-f", valuesFile(t, c.values))
		if err == nil || !strings.Contains(out, c.msg) {
			t.Errorf("values %q: err %v, output should name %q:\n%s", c.values, err, c.msg, out)
		}
	}
}

func keys(m map[string]doc) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
