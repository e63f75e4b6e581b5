package locust

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// ExportOptions say how the exported files run the workload.
type ExportOptions struct {
	// Host is the base URL the load goes to (http://HOST:PORT).
	Host string
	// Users is Locust's -u; Duration its -t; Replicas the Kubernetes
	// worker Deployment's and the compose file's worker count.
	Users    int
	Duration time.Duration
	Replicas int
	// Source says where the workload came from, for the README.
	Source string
}

// Export returns the files of a directory that runs lf without phptune:
// the locustfile, a README with the master and worker commands, a
// Kubernetes manifest (the locustfile in a ConfigMap, a master Deployment
// and Service, a worker Deployment with Replicas) and a compose file. The
// secrets' values are in none of them: each file names the environment
// variables to set.
func Export(lf Locustfile, o ExportOptions) map[string][]byte {
	if o.Users < 1 {
		o.Users = 10
	}
	if o.Replicas < 1 {
		o.Replicas = 2
	}
	if o.Duration < time.Second {
		o.Duration = 60 * time.Second
	}
	run := fmt.Sprintf("%ds", int(o.Duration/time.Second))
	image := "locustio/locust:" + PinnedVersion()
	var names []string
	for _, s := range lf.Secrets {
		names = append(names, s.Env)
	}
	return map[string][]byte{
		"locustfile.py":   lf.Source,
		"README.md":       exportReadme(lf, o, run, names),
		"kubernetes.yaml": kubernetesYAML(lf, o, run, image, names),
		"compose.yaml":    composeYAML(o, run, image, names),
	}
}

// exportReadme says how to run the exported workload on one machine, on
// master and workers, on Kubernetes and with Docker Compose, which
// credentials to set (names: their variables), and what Locust measures
// differently from phptune.
func exportReadme(lf Locustfile, o ExportOptions, run string, names []string) []byte {
	var readme bytes.Buffer
	fmt.Fprintf(&readme, "# A phptune workload on Locust %s\n\n", PinnedVersion())
	fmt.Fprintf(&readme, "phptune wrote `locustfile.py` from %s. It runs on Locust %s (pip install locust==%s)\nwithout phptune. Failures carry phptune's error classes; `phptune import locust` reads the\nstatistics back (`--json` output, `--json-file`, or a `--csv` prefix) as a bench record.\n\n", o.Source, PinnedVersion(), PinnedVersion())
	if len(lf.Secrets) > 0 {
		readme.WriteString("## Credentials\n\nThese values were kept out of every file; set them where Locust runs (master and workers):\n\n")
		for _, s := range lf.Secrets {
			fmt.Fprintf(&readme, "- `%s`: the %s\n", s.Env, s.What)
		}
		readme.WriteString("\nKubernetes reads them from the Secret `phptune-locust`:\n\n    kubectl create secret generic phptune-locust")
		for _, n := range names {
			fmt.Fprintf(&readme, " --from-literal=%s=...", n)
		}
		readme.WriteString("\n\n")
	}
	fmt.Fprintf(&readme, "## One machine\n\n    locust -f locustfile.py --headless -u %d -t %s --host %s --json > stats.json\n    phptune import locust stats.json\n\n", o.Users, run, o.Host)
	fmt.Fprintf(&readme, "## Master and workers\n\nOn the master (it waits for the workers, then runs %s):\n\n    locust -f locustfile.py --master --headless -u %d -t %s --host %s \\\n        --expect-workers %d --expect-workers-max-wait 120 --csv run --json > stats.json\n\nOn each worker machine (the locustfile comes from the master):\n\n    locust -f - --worker --master-host MASTER_ADDRESS --master-port 5557\n\nThen: `phptune import locust stats.json`, or `phptune import locust run` for the CSV files\n(their failures file names each error's class and status; Locust counts\nno status of a successful request).\n\n", run, o.Users, run, o.Host, o.Replicas)
	fmt.Fprintf(&readme, "## Kubernetes\n\n    kubectl apply -f kubernetes.yaml\n    kubectl logs -f deploy/phptune-locust-master > stats.json   # the JSON is its last output\n\nThe master runs headless for %s once %d workers joined; scale the workers with\n`kubectl scale deploy/phptune-locust-worker --replicas N` (and `--expect-workers` in the master's args).\n\n", run, o.Replicas)
	fmt.Fprintf(&readme, "## Docker Compose\n\n    docker compose up --scale worker=%d\n\n", o.Replicas)
	readme.WriteString("## What Locust measures differently\n\nIts percentiles come from rounded response-time buckets (1 ms below 100 ms, 10 ms below\n1 s, 100 ms above); it does not correct coordinated omission (a user waits for its answer,\nso a slow server delays the requests that would have shown it); and its Python workers\nspend far more CPU per request than phptune's generator: give it a core per worker.\n")
	return readme.Bytes()
}

// kubernetesYAML is the locustfile as a ConfigMap, Locust's master
// (Deployment and Service) and its workers (Deployment), the credentials
// (names) read from the Secret phptune-locust.
func kubernetesYAML(lf Locustfile, o ExportOptions, run, image string, names []string) []byte {
	var k bytes.Buffer
	k.WriteString("# Written by phptune export locust: the locustfile, Locust's master (Deployment and\n# Service) and its workers (Deployment). kubectl apply -f kubernetes.yaml\n")
	k.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: phptune-locustfile\ndata:\n  locustfile.py: |\n")
	for _, line := range strings.Split(strings.TrimRight(string(lf.Source), "\n"), "\n") {
		if line == "" {
			k.WriteString("\n")
			continue
		}
		k.WriteString("    " + line + "\n")
	}
	// Each credential read from the Secret phptune-locust.
	env := envList(names, "          env:\n", "            - name: %[1]s\n              valueFrom:\n                secretKeyRef:\n                  name: phptune-locust\n                  key: %[1]s\n")
	k.WriteString(deployment("master", 1, image, fmt.Sprintf(`          args: ["-f", "/locust/locustfile.py", "--master", "--headless", "-u", "%d", "-t", "%s", "--host", %q,
                 "--expect-workers", "%d", "--expect-workers-max-wait", "300", "--json"]
          ports:
            - {name: master, containerPort: 5557}
            - {name: web, containerPort: 8089}
`, o.Users, run, o.Host, o.Replicas), env))
	k.WriteString(`---
apiVersion: v1
kind: Service
metadata:
  name: phptune-locust-master
spec:
  selector: {app: phptune-locust, role: master}
  ports:
    - {name: master, port: 5557, targetPort: 5557}
    - {name: web, port: 8089, targetPort: 8089}
`)
	k.WriteString(deployment("worker", o.Replicas, image, `          args: ["-f", "/locust/locustfile.py", "--worker", "--master-host", "phptune-locust-master", "--master-port", "5557"]
`, env))
	return k.Bytes()
}

// deployment is the Deployment of Locust's role (master or worker):
// replicas pods of image with the locustfile's ConfigMap mounted; container
// is the container's lines after its image (args, ports), env its
// credentials.
func deployment(role string, replicas int, image, container, env string) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: phptune-locust-%[1]s
  labels: {app: phptune-locust, role: %[1]s}
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: phptune-locust, role: %[1]s}
  template:
    metadata:
      labels: {app: phptune-locust, role: %[1]s}
    spec:
      containers:
        - name: %[1]s
          image: %[3]s
%[4]s%[5]s          volumeMounts:
            - {name: locustfile, mountPath: /locust}
      volumes:
        - name: locustfile
          configMap: {name: phptune-locustfile}
`, role, replicas, image, container, env)
}

// composeYAML is Docker Compose's master and worker services, the
// credentials (names) passed from the shell's environment.
func composeYAML(o ExportOptions, run, image string, names []string) []byte {
	var c bytes.Buffer
	// Each credential passed from the shell's environment.
	env := envList(names, "    environment:\n", "      - %[1]s\n")
	fmt.Fprintf(&c, `# Written by phptune export locust: docker compose up --scale worker=%d
# (credentials, if any, are passed from your shell's environment by name).
services:
  master:
    image: %s
    command: -f /locust/locustfile.py --master --headless -u %d -t %s --host %s --expect-workers %d --expect-workers-max-wait 300 --json
    volumes:
      - ./locustfile.py:/locust/locustfile.py:ro
    ports:
      - "8089:8089"
%s  worker:
    image: %s
    command: -f /locust/locustfile.py --worker --master-host master
    volumes:
      - ./locustfile.py:/locust/locustfile.py:ro
%s`, o.Replicas, image, o.Users, run, o.Host, o.Replicas, env, image, env)
	return c.Bytes()
}

// envList is a YAML list under head with one item per variable of
// names, written by item (%[1]s: the name); "" for none.
func envList(names []string, head, item string) string {
	if len(names) == 0 {
		return ""
	}
	var e strings.Builder
	e.WriteString(head)
	for _, n := range names {
		fmt.Fprintf(&e, item, n)
	}
	return e.String()
}
