// Package ansible writes an Ansible playbook and role that put a
// recommendation on a fleet of hosts the way phptune apply puts it on one:
// php-fpm and PHP drop-ins next to the distro's files (never editing
// them), php-fpm -t on the whole configuration, a graceful reload, a
// health check, and on any failure the previous files back and php-fpm
// reloaded. The play rolls out one host at a time (serial) and stops at
// the first host that fails (max_fail_percentage: 0).
//
// The package is pure: Role returns the files; the CLI writes them.
package ansible

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/livehost"
)

// RoleName is the role's directory under roles/.
const RoleName = "phptune_apply"

// Options say which pool and PHP branch the role is for.
type Options struct {
	// Pool is the php-fpm pool the drop-in reopens ("www").
	Pool string
	// PHPVersion is the hosts' PHP branch ("8.2"): the default paths
	// (/etc/php/8.2/fpm, php-fpm8.2, php8.2-fpm.service) follow it.
	PHPVersion string
	// Source says where the recommendation came from, for the files'
	// headers (a tune's directory or a knob file).
	Source string
}

var (
	poolName   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	phpVersion = regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}$`)
)

// ByRole is the drop-ins' header when the role writes them.
var ByRole = livehost.Writer{Name: "phptune's Ansible role (phptune export ansible)", Undo: "ansible-playbook rollback.yml"}

// Role renders the playbook, the rollback playbook, the role and a README
// for rec. It refuses what a drop-in cannot carry to a live host, as
// phptune apply does: another server's configuration, several pools, a
// move of the pool's socket; and a recommendation with nothing for
// php-fpm or PHP.
func Role(rec knob.Config, o Options) (map[string][]byte, error) {
	if !poolName.MatchString(o.Pool) {
		return nil, fmt.Errorf("--pool %q: a pool name is letters, digits, '.', '_' and '-'", o.Pool)
	}
	if !phpVersion.MatchString(o.PHPVersion) {
		return nil, fmt.Errorf("--php-version %q: give the hosts' PHP branch, e.g. 8.2", o.PHPVersion)
	}
	if !knob.RunsFPM(rec.Server()) {
		return nil, fmt.Errorf("the recommendation is for server=%s, which runs no php-fpm; the role writes php-fpm and PHP drop-ins only", rec.Server())
	}
	if n := rec.Pools(); n > 1 {
		return nil, fmt.Errorf("%s=%d: the role does not split a live pool into %d; write the pools from the recommendation's php-fpm-pool.conf and nginx's upstream by hand", knob.PoolsKnob, n, n)
	}
	if rec["listen"] == "tcp" {
		return nil, fmt.Errorf("listen=tcp: the role does not move pool %s's socket, which the web server passes requests to; change both by hand from the recommendation", o.Pool)
	}
	pool, ini, knobs := livehost.RenderFPM(o.Pool, "pool.d/"+o.Pool+".conf", ByRole, rec)
	if pool == nil && ini == nil {
		return nil, fmt.Errorf("the recommendation changes no php-fpm or PHP setting: there is nothing for the role to write")
	}
	files := map[string][]byte{}
	role := "roles/" + RoleName + "/"
	var dropins []string
	if pool != nil {
		files[role+"files/"+livehost.PoolDropInName] = pool
		dropins = append(dropins, fmt.Sprintf("  - src: %s\n    dest: \"{{ phptune_fpm_pool_dir }}/%s\"\n", livehost.PoolDropInName, livehost.PoolDropInName))
	}
	if ini != nil {
		files[role+"files/"+livehost.IniDropInName] = ini
		dropins = append(dropins, fmt.Sprintf("  - src: %s\n    dest: \"{{ phptune_fpm_ini_dir }}/%s\"\n", livehost.IniDropInName, livehost.IniDropInName))
	}
	header := "# Written by phptune export ansible"
	if o.Source != "" {
		header += " from " + oneLine(o.Source)
	}
	header += ".\n"
	files["playbook.yml"] = []byte(header + playbook)
	files["rollback.yml"] = []byte(header + rollback)
	files[role+"defaults/main.yml"] = []byte(header + fmt.Sprintf(defaults, o.PHPVersion))
	files[role+"vars/main.yml"] = []byte(header + "# The drop-ins this recommendation needs (" + strings.Join(knobs, " ") + ").\nphptune_dropins:\n" + strings.Join(dropins, ""))
	files[role+"tasks/main.yml"] = []byte(header + tasksMain)
	files[role+"tasks/reload.yml"] = []byte(header + tasksReload)
	files[role+"tasks/health.yml"] = []byte(header + tasksHealth)
	files["README.md"] = readme(knobs, manual(rec), o)
	return files, nil
}

// manual lists the recommendation's settings the role does not write:
// the web server's and MariaDB's (see phptune apply).
func manual(rec knob.Config) []string {
	var out []string
	for _, ch := range knob.Diff(knob.Defaults(), rec) {
		k, _ := knob.Lookup(ch.Knob)
		if k.Component != knob.PHPFPM && k.Component != knob.PHP && k.Component != knob.Server && k.Component != knob.Build {
			out = append(out, ch.Knob+"="+ch.To)
		}
	}
	sort.Strings(out)
	return out
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func readme(knobs, manual []string, o Options) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# phptune's recommendation as an Ansible role\n\nWritten by `phptune export ansible`")
	if o.Source != "" {
		fmt.Fprintf(&b, " from `%s`", oneLine(o.Source))
	}
	fmt.Fprintf(&b, " for pool `%s` on PHP %s.\n\nIt sets: `%s`.\n\n", o.Pool, o.PHPVersion, strings.Join(knobs, "`, `"))
	b.WriteString(readmeBody)
	if len(manual) > 0 {
		fmt.Fprintf(&b, "\n## Not applied by the role\n\n`%s`: nginx's worker_processes, events and listen cannot be set from an included file and the role never restarts MariaDB. Merge them by hand from the recommendation's files (the tune's directory), as `phptune apply --dry-run` prints them.\n", strings.Join(manual, "`, `"))
	}
	return []byte(b.String())
}

const readmeBody = "```sh\n" + `ansible-playbook -i inventory playbook.yml --check --diff      # what would change, nothing changed
ansible-playbook -i inventory playbook.yml                     # roll out, one host at a time
ansible-playbook -i inventory rollback.yml                     # remove phptune's drop-ins again
` + "```" + `

The play runs on the inventory group ` + "`phptune`" + ` (or ` + "`-e phptune_hosts=GROUP`" + `), one host
at a time (` + "`-e phptune_serial=N`" + `), and stops the rollout at the first host that fails
(` + "`max_fail_percentage: 0`" + `). On each host, as ` + "`phptune apply`" + ` does:

1. the check URL's status is read (` + "`-e phptune_check_url=http://127.0.0.1/`" + `, optional);
2. the drop-ins are written next to the distro's files, never editing them: the pool's
   settings in ` + "`pool.d/zz-phptune.conf`" + ` (reopening the pool's section, read after its own
   file), PHP's in ` + "`conf.d/99-phptune.ini`" + ` (root:root 0644);
3. ` + "`php-fpm -t`" + ` checks the whole configuration;
4. php-fpm reloads: ` + "`systemctl reload`" + ` (` + "`phptune_fpm_reload: systemd`" + `, the default) or SIGUSR2
   to the root-owned master whose title names the configuration (` + "`signal`" + `: no pid file
   is trusted);
5. after ` + "`phptune_settle_seconds`" + ` the master must run and the check URL answer as before.

Any failure puts each drop-in back as it was (or removes it when it was not there),
reloads php-fpm (starting it again if a reload killed it) and fails the host with the
reason. Variables and their defaults: ` + "`roles/" + RoleName + "/defaults/main.yml`" + `.
`

const playbook = `# Rolls the recommendation out one host at a time and stops at the first
# host that fails.
- name: phptune recommendation
  hosts: "{{ phptune_hosts | default('phptune') }}"
  become: true
  serial: "{{ phptune_serial | default(1) }}"
  max_fail_percentage: 0
  roles:
    - ` + RoleName + `
`

const rollback = `# Removes phptune's drop-ins and reloads php-fpm: the hosts are back on
# their own files.
- name: phptune rollback
  hosts: "{{ phptune_hosts | default('phptune') }}"
  become: true
  serial: "{{ phptune_serial | default(1) }}"
  max_fail_percentage: 0
  tasks:
    - name: Read the role's defaults
      ansible.builtin.include_vars:
        file: roles/` + RoleName + `/defaults/main.yml
    - name: Read the role's drop-ins
      ansible.builtin.include_vars:
        file: roles/` + RoleName + `/vars/main.yml
    - name: Status of the check URL before the rollback
      ansible.builtin.uri:
        url: "{{ phptune_check_url }}"
        follow_redirects: none
        status_code: "{{ range(100, 600) | list }}"
      register: phptune_check_before
      when: phptune_check_url | length > 0
    - name: Remove phptune's drop-ins
      ansible.builtin.file:
        path: "{{ item.dest }}"
        state: absent
      loop: "{{ phptune_dropins }}"
      register: phptune_removed
    - name: Check php-fpm's whole configuration
      ansible.builtin.command:
        argv: ["{{ phptune_fpm_binary }}", "-t", "-y", "{{ phptune_fpm_conf }}"]
      environment: "{{ phptune_fpm_environment }}"
      changed_when: false
      when: phptune_removed is changed and not ansible_check_mode
    - name: Reload php-fpm
      ansible.builtin.include_role:
        name: ` + RoleName + `
        tasks_from: reload.yml
      when: phptune_removed is changed and not ansible_check_mode
    - name: Health check
      ansible.builtin.include_role:
        name: ` + RoleName + `
        tasks_from: health.yml
      when: phptune_removed is changed and not ansible_check_mode
`

const defaults = `# Override with -e or in the inventory.
phptune_php_version: "%s"
phptune_fpm_binary: "/usr/sbin/php-fpm{{ phptune_php_version }}"
phptune_fpm_conf: "/etc/php/{{ phptune_php_version }}/fpm/php-fpm.conf"
phptune_fpm_pool_dir: "/etc/php/{{ phptune_php_version }}/fpm/pool.d"
phptune_fpm_ini_dir: "/etc/php/{{ phptune_php_version }}/fpm/conf.d"
phptune_fpm_service: "php{{ phptune_php_version }}-fpm"
# systemd: systemctl reload the service; signal: SIGUSR2 to the root-owned
# master whose title names phptune_fpm_conf (hosts without systemd).
phptune_fpm_reload: systemd
# The environment php-fpm -t and a restarted master get (e.g.
# PHP_INI_SCAN_DIR for a configuration outside /etc).
phptune_fpm_environment: {}
# An http:// URL on the host's loopback that must answer after the reload
# with the status it had before ("" for none).
phptune_check_url: ""
phptune_settle_seconds: 5
`

const tasksMain = `# Applies the drop-ins as phptune apply does; any failure puts the
# previous files back and reloads.
- name: Refuse a check URL off loopback
  ansible.builtin.assert:
    that: phptune_check_url is match('^http://(127\\.0\\.0\\.1|localhost|\\[::1\\])([:/]|$)')
    fail_msg: "phptune_check_url {{ phptune_check_url }}: give an http:// URL on loopback"
  when: phptune_check_url | length > 0

- name: Read the drop-ins' previous content
  ansible.builtin.slurp:
    src: "{{ item.dest }}"
  loop: "{{ phptune_dropins }}"
  register: phptune_previous
  failed_when: false

- name: Status of the check URL before the change
  ansible.builtin.uri:
    url: "{{ phptune_check_url }}"
    follow_redirects: none
    status_code: "{{ range(100, 600) | list }}"
  register: phptune_check_before
  when: phptune_check_url | length > 0

- name: Apply the recommendation
  block:
    - name: Write the drop-ins
      ansible.builtin.copy:
        src: "{{ item.src }}"
        dest: "{{ item.dest }}"
        owner: root
        group: root
        mode: "0644"
      loop: "{{ phptune_dropins }}"
      register: phptune_written

    - name: Check php-fpm's whole configuration
      ansible.builtin.command:
        argv: ["{{ phptune_fpm_binary }}", "-t", "-y", "{{ phptune_fpm_conf }}"]
      environment: "{{ phptune_fpm_environment }}"
      changed_when: false
      when: phptune_written is changed and not ansible_check_mode

    - name: Reload php-fpm
      ansible.builtin.include_tasks: reload.yml
      when: phptune_written is changed and not ansible_check_mode

    - name: Health check
      ansible.builtin.include_tasks: health.yml
      when: phptune_written is changed and not ansible_check_mode

  rescue:
    - name: Put the previous drop-ins back
      ansible.builtin.copy:
        content: "{{ item.content | b64decode }}"
        dest: "{{ item.item.dest }}"
        owner: root
        group: root
        mode: "0644"
      loop: "{{ phptune_previous.results }}"
      when: item.content is defined

    - name: Remove the drop-ins that were not there
      ansible.builtin.file:
        path: "{{ item.item.dest }}"
        state: absent
      loop: "{{ phptune_previous.results }}"
      when: item.content is not defined

    - name: Reload php-fpm with the previous configuration
      ansible.builtin.include_tasks: reload.yml
      vars:
        phptune_start_if_down: true

    - name: Fail the host
      ansible.builtin.fail:
        msg: >-
          phptune: "{{ ansible_failed_task.name }}" failed
          ({{ ansible_failed_result.msg | default('') }} {{ ansible_failed_result.stderr | default('') }});
          the previous configuration is back and php-fpm reloaded
`

const tasksReload = `# Reloads php-fpm gracefully; with phptune_start_if_down (a rollback)
# starts it again when a reload killed it.
- name: Reload php-fpm (systemd)
  ansible.builtin.systemd:
    name: "{{ phptune_fpm_service }}"
    state: "{{ 'restarted' if phptune_start_if_down | default(false) else 'reloaded' }}"
  when: phptune_fpm_reload == 'systemd'

- name: Find php-fpm's master (its title names the configuration; owned by root)
  ansible.builtin.command:
    argv: [pgrep, -u, root, -f, "^php-fpm: master process \\({{ phptune_fpm_conf | regex_escape }}\\)"]
  register: phptune_master
  changed_when: false
  failed_when: phptune_master.stdout_lines | length > 1 or (phptune_master.rc != 0 and not phptune_start_if_down | default(false))
  when: phptune_fpm_reload == 'signal'

- name: Reload php-fpm (SIGUSR2 to its master)
  ansible.builtin.command:
    argv: [kill, -USR2, "{{ phptune_master.stdout_lines | first }}"]
  when: phptune_fpm_reload == 'signal' and phptune_master.stdout_lines | length == 1

- name: Start php-fpm again (a reload killed its master)
  ansible.builtin.command:
    argv: ["{{ phptune_fpm_binary }}", "-y", "{{ phptune_fpm_conf }}"]
  environment: "{{ phptune_fpm_environment }}"
  when: phptune_fpm_reload == 'signal' and phptune_master.stdout_lines | length == 0
`

const tasksHealth = `# The reloaded php-fpm serves: its master runs and the check URL answers
# with the status it had before.
- name: Let the reload settle
  ansible.builtin.wait_for:
    timeout: "{{ phptune_settle_seconds | int }}"

- name: php-fpm's master runs
  ansible.builtin.command:
    argv: [pgrep, -u, root, -f, "^php-fpm: master process \\({{ phptune_fpm_conf | regex_escape }}\\)"]
  register: phptune_master_after
  changed_when: false
  retries: 10
  delay: 1
  until: phptune_master_after.rc == 0 and phptune_master_after.stdout_lines | length == 1

- name: The check URL answers as before
  ansible.builtin.uri:
    url: "{{ phptune_check_url }}"
    follow_redirects: none
    status_code: "{{ phptune_check_before.status }}"
  register: phptune_check_after
  retries: 5
  delay: 1
  until: phptune_check_after is succeeded
  when: phptune_check_url | length > 0
`
