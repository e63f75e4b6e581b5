package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/phptune/phptune/internal/knob"
)

// Process is one process phptune started for a lab: the leader of its own
// process group (nginx master, php-fpm master, mariadbd).
type Process struct {
	Component string `json:"component"` // "nginx", "php-fpm", "mariadb"
	PID       int    `json:"pid"`
}

// Lab is a lab's recorded state (DIR/state.json). Everything a client needs to
// reach the stack is here; secrets are kept apart in DIR/secrets.json.
type Lab struct {
	Name  string `json:"name"`
	Dir   string `json:"dir"`
	App   string `json:"app"`
	State string `json:"state"` // "starting", "up", "stopping"
	// OwnerPID is the phptune process that is starting or stopping the lab;
	// a lab left "starting" by a dead owner is cleaned by the next command.
	OwnerPID int `json:"owner_pid,omitempty"`
	// URL is the base URL of the web server, e.g. "http://127.0.0.1:38121".
	URL string `json:"url"`
	// FPMListen is php-fpm's socket as "unix:/path" or "tcp:127.0.0.1:PORT".
	FPMListen string `json:"fpm_listen"`
	// FPMStatusPath and FPMPingPath are the pool's pm.status_path and ping.path.
	FPMStatusPath string `json:"fpm_status_path"`
	// NginxStatusURL is nginx's stub_status.
	NginxStatusURL string `json:"nginx_status_url"`
	// DocRoot is the document root; ScriptFilename is the front controller.
	DocRoot        string `json:"docroot"`
	ScriptFilename string `json:"script_filename"`
	// MariaDBSocket is set for apps that use MariaDB.
	MariaDBSocket string      `json:"mariadb_socket,omitempty"`
	Config        knob.Config `json:"config"`
	Processes     []Process   `json:"processes"`
	// User is the unprivileged account the stack runs as.
	User string `json:"user"`
}

// ErrNoLab is returned by Open for a name that has no lab.
var ErrNoLab = errors.New("no such lab")

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// CheckName refuses names that would not make a safe directory name.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: use 1-32 lower-case letters, digits and dashes, starting with a letter or digit", name)
	}
	return nil
}

// Open reads the state of the lab called name.
func Open(name string) (*Lab, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return readState(filepath.Join(Root(), name))
}

func readState(dir string) (*Lab, error) {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (looked in %s); list labs with: phptune lab status", ErrNoLab, filepath.Base(dir), filepath.Dir(dir))
	}
	if err != nil {
		return nil, err
	}
	var l Lab
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("lab state %s is corrupt: %v; remove it with: phptune lab down %s", dir, err, filepath.Base(dir))
	}
	return &l, nil
}

// writeState saves l atomically so a crash never leaves half a state file.
func (l *Lab) writeState() error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(l.Dir, "state.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(l.Dir, "state.json"))
}
