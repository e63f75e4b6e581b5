// Package unit runs NGINX Unit for a lab: the JSON configuration its
// control API takes (rendered from a knob.Config), the unitd binary to run
// (NGINX's own package on PATH, or a build of `phptune build unit`), the
// control socket client (apply the configuration, read /status) and the
// parser of its status document.
//
// Unit is not configured by files: unitd starts empty, listening on its
// control socket only, and the configuration is PUT to /config. A lab's
// unitd runs unprivileged as the lab's account, with its PHP module
// (php.unit.so, built against Debian's libphp8.2-embed) running the app in
// Unit's own "application" processes: there is no php-fpm.
package unit

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
)

// AppName is the application's name in the configuration and in Unit's
// process titles (unit: "app" application).
const AppName = "app"

// Site is what the configuration needs from the lab.
type Site struct {
	// Listen is the HTTP listener, 127.0.0.1:PORT.
	Listen string
	// DocRoot is the app's document root (an absolute path).
	DocRoot string
	// FrontController sends requests for files that do not exist to
	// /index.php (WordPress's permalinks); without it they answer 404.
	FrontController bool
	// Env is the application's environment, NAME=VALUE.
	Env []string
	// StatusScript, when set, is phptune's runtime status script (outside
	// the docroot); StatusPath on the listener runs it, from 127.0.0.1
	// only, as php-fpm's socket serves it to the tuner elsewhere.
	StatusScript string
}

// StatusPath is where a lab's Unit serves phptune's status script.
const StatusPath = "/.phptune-status"

// Config is Unit's configuration object (the fields phptune sets).
type Config struct {
	Listeners    map[string]Listener    `json:"listeners"`
	Routes       []Route                `json:"routes"`
	Applications map[string]Application `json:"applications"`
	Settings     *Settings              `json:"settings,omitempty"`
}

// Listener passes a socket's requests on.
type Listener struct {
	Pass    string `json:"pass"`
	Backlog int64  `json:"backlog,omitempty"`
}

// Route is one step of the routes array.
type Route struct {
	Match  *Match `json:"match,omitempty"`
	Action Action `json:"action"`
}

// Match selects requests by URI patterns.
type Match struct {
	URI    []string `json:"uri"`
	Source []string `json:"source,omitempty"`
}

// Action passes a request to an application target or serves a file.
type Action struct {
	Pass     string  `json:"pass,omitempty"`
	Share    string  `json:"share,omitempty"`
	Fallback *Action `json:"fallback,omitempty"`
}

// Application is the PHP application.
type Application struct {
	Type      string  `json:"type"`
	Processes any     `json:"processes"` // an integer (static) or Processes
	Limits    *Limits `json:"limits,omitempty"`
	// Threads is request threads per process (a ZTS PHP only); 0 leaves
	// Unit's default, 1.
	Threads     int64             `json:"threads,omitempty"`
	Targets     map[string]Target `json:"targets"`
	Environment map[string]string `json:"environment,omitempty"`
}

// Processes is a dynamic pool.
type Processes struct {
	Max         int64 `json:"max"`
	Spare       int64 `json:"spare"`
	IdleTimeout int64 `json:"idle_timeout"`
}

// Limits bound each application process.
type Limits struct {
	Requests int64 `json:"requests,omitempty"`
}

// Target is a way into the application: "direct" runs the .php file the
// URI names (a directory's index.php), "index" runs /index.php.
type Target struct {
	Root   string `json:"root"`
	Script string `json:"script,omitempty"`
}

// Settings are Unit's global settings.
type Settings struct {
	HTTP HTTPSettings `json:"http"`
}

// HTTPSettings keeps Unit's defaults but says nothing of its version.
type HTTPSettings struct {
	ServerVersion bool `json:"server_version"`
}

// Build returns the configuration for site and cfg's unit.* knobs.
func Build(cfg knob.Config, site Site) Config {
	root := strings.TrimRight(site.DocRoot, "/") + "/"
	app := Application{
		Type:    "php",
		Targets: map[string]Target{"direct": {Root: root}, "index": {Root: root, Script: "index.php"}},
	}
	max := cfg.Int("unit.processes")
	if cfg["unit.pm"] == "dynamic" {
		app.Processes = Processes{Max: max, Spare: cfg.Int("unit.spare_processes"), IdleTimeout: cfg.Int("unit.idle_timeout")}
	} else {
		app.Processes = max
	}
	if n := cfg.Int("unit.max_requests"); n > 0 {
		app.Limits = &Limits{Requests: n}
	}
	if n := cfg.Int("unit.threads"); n > 1 {
		app.Threads = n
	}
	if len(site.Env) > 0 {
		app.Environment = map[string]string{}
		for _, kv := range site.Env {
			k, v, _ := strings.Cut(kv, "=")
			app.Environment[k] = v
		}
	}
	direct := Action{Pass: "applications/" + AppName + "/direct"}
	var routes []Route
	if site.FrontController {
		// Scripts run as named; every other path is a file of the
		// docroot if there is one, else the front controller (the
		// directory of WordPress's admin runs its own index.php).
		routes = []Route{
			{Match: &Match{URI: []string{"*.php", "*.php/*", "/wp-admin/"}}, Action: direct},
			{Action: Action{Share: root[:len(root)-1] + "$uri", Fallback: &Action{Pass: "applications/" + AppName + "/index"}}},
		}
	} else {
		// Scripts and directories (their index.php) run; other paths are
		// files or 404.
		routes = []Route{
			{Match: &Match{URI: []string{"*.php", "*.php/*", "*/"}}, Action: direct},
			{Action: Action{Share: root[:len(root)-1] + "$uri"}},
		}
	}
	if site.StatusScript != "" {
		dir, script := filepath.Split(site.StatusScript)
		app.Targets["status"] = Target{Root: dir, Script: script}
		routes = append([]Route{{Match: &Match{URI: []string{StatusPath}, Source: []string{"127.0.0.1"}}, Action: Action{Pass: "applications/" + AppName + "/status"}}}, routes...)
	}
	return Config{
		Listeners:    map[string]Listener{site.Listen: {Pass: "routes", Backlog: cfg.Int("unit.listen_backlog")}},
		Routes:       routes,
		Applications: map[string]Application{AppName: app},
		Settings:     &Settings{HTTP: HTTPSettings{ServerVersion: false}},
	}
}

// Render is Build as the indented JSON document PUT to /config.
func Render(cfg knob.Config, site Site) string {
	b, err := json.MarshalIndent(Build(cfg, site), "", "  ")
	if err != nil {
		panic(fmt.Sprintf("unit: rendering the configuration: %v", err)) // plain structs: cannot fail
	}
	return string(b) + "\n"
}
