package ansible

// The role's fixed files. Role writes them with a header; vars/main.yml,
// the drop-ins and README.md are made from the recommendation.

const readmeBody = "```sh\n" + `ansible-playbook -i inventory playbook.yml --check --diff      # what would change, nothing changed
ansible-playbook -i inventory playbook.yml                     # roll out, one host at a time
ansible-playbook -i inventory rollback.yml                     # remove phptune's drop-ins again
` + "```" + `

The play runs on the inventory group ` + "`phptune`" + ` (or ` + "`-e phptune_hosts=GROUP`" + `), one host
at a time (` + "`-e phptune_serial=N`" + `), and stops the rollout at the first host that fails
(` + "`max_fail_percentage: 0`" + `). On each host, as ` + "`phptune apply`" + ` does:

1. the check URL's status is read (` + "`-e phptune_check_url=http://127.0.0.1/`" + `, optional), and
   MariaDB's live values of the variables it changes;
2. the drop-ins are written next to the distro's files, never editing them (root:root
   0644): the pool's settings in ` + "`pool.d/zz-phptune.conf`" + ` (reopening the pool's section,
   read after its own file), PHP's in ` + "`conf.d/99-phptune.ini`" + `, nginx's access log in
   ` + "`/etc/nginx/conf.d/zz-phptune.conf`" + `, MariaDB's in ` + "`mariadb.conf.d/99-phptune.cnf`" + `;
3. ` + "`php-fpm -t`" + `, ` + "`nginx -t`" + ` and ` + "`mariadbd --help --verbose`" + ` check each whole configuration;
4. php-fpm and nginx reload: ` + "`systemctl reload`" + ` (the default) or, with
   ` + "`phptune_fpm_reload: signal`" + ` / ` + "`phptune_nginx_reload: signal`" + `, SIGUSR2 / SIGHUP to the
   master found by its title, run by root (real and effective uid: a set-uid program of another user is not taken), no pid file trusted; MariaDB is never
   restarted: its variables are set live with ` + "`SET GLOBAL`" + ` (a warning fails) and read back;
5. after ` + "`phptune_settle_seconds`" + ` php-fpm's master must run and the check URL answer as before.

Any failure puts each drop-in back as it was (or removes it when it was not there), sets
MariaDB's variables back to the values read first, reloads php-fpm (starting it again if
a reload killed it) and nginx, and fails the host with the reason. ` + "`rollback.yml`" + ` removes
the drop-ins, reloads, and sets MariaDB's variables to what its own files say (what a
restart would give). Variables and their defaults: ` + "`roles/" + RoleName + "/defaults/main.yml`" + `.
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

const rollback = `# Removes phptune's drop-ins, reloads php-fpm and nginx, and sets
# MariaDB's variables to what its own files say: the hosts are back on
# their own configuration.
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
      loop: "{{ phptune_dropins + phptune_nginx_dropins + phptune_mariadb_dropins }}"
      register: phptune_removed
    - name: Which servers' drop-ins were removed
      ansible.builtin.set_fact:
        phptune_fpm_removed: "{{ phptune_removed.results | selectattr('changed') | map(attribute='item.dest') | intersect(phptune_dropins | map(attribute='dest')) | length > 0 }}"
        phptune_nginx_removed: "{{ phptune_removed.results | selectattr('changed') | map(attribute='item.dest') | intersect(phptune_nginx_dropins | map(attribute='dest')) | length > 0 }}"
    - name: Check php-fpm's whole configuration
      ansible.builtin.command:
        argv: ["{{ phptune_fpm_binary }}", "-t", "-y", "{{ phptune_fpm_conf }}"]
      environment: "{{ phptune_fpm_environment }}"
      changed_when: false
      when: phptune_fpm_removed | bool and not ansible_check_mode
    - name: Check nginx's whole configuration
      ansible.builtin.command:
        argv: "{{ [phptune_nginx_binary, '-t', '-c', phptune_nginx_conf] + phptune_nginx_args }}"
      changed_when: false
      when: phptune_nginx_removed | bool and not ansible_check_mode
    - name: Reload php-fpm
      ansible.builtin.include_role:
        name: ` + RoleName + `
        tasks_from: reload.yml
      when: phptune_fpm_removed | bool and not ansible_check_mode
    - name: Reload nginx
      ansible.builtin.include_role:
        name: ` + RoleName + `
        tasks_from: reload-nginx.yml
      when: phptune_nginx_removed | bool and not ansible_check_mode
    - name: What MariaDB's own files set
      ansible.builtin.command:
        argv: "{{ [phptune_mariadb_server] + phptune_mariadb_defaults_args + ['--help', '--verbose'] }}"
      register: phptune_mariadb_help
      changed_when: false
      when: phptune_mariadb_vars | length > 0 and not ansible_check_mode
    - name: Each variable's value in them
      ansible.builtin.set_fact:
        phptune_mariadb_files: "{{ phptune_mariadb_files | default([]) + [phptune_mariadb_help.stdout | regex_findall('(?m)^' + (item | replace('_', '-')) + '\\s+(\\S+)$') | first] }}"
      loop: "{{ phptune_mariadb_vars }}"
      when: phptune_mariadb_vars | length > 0 and not ansible_check_mode
    - name: Set MariaDB's variables back to them
      ansible.builtin.include_role:
        name: ` + RoleName + `
        tasks_from: mariadb-set.yml
      vars:
        phptune_mariadb_target: "{{ phptune_mariadb_files }}"
      when: phptune_mariadb_vars | length > 0 and not ansible_check_mode
    - name: Health check
      ansible.builtin.include_role:
        name: ` + RoleName + `
        tasks_from: health.yml
      when: (phptune_fpm_removed | bool or phptune_nginx_removed | bool) and not ansible_check_mode
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
# nginx: its binary, main file, more arguments for nginx -t (e.g. -e for
# a configuration outside /etc), the http-level include directory, and
# how it reloads (systemd, or signal: SIGHUP to the one root-owned master
# whose title matches phptune_nginx_master_pattern).
phptune_nginx_binary: /usr/sbin/nginx
phptune_nginx_conf: /etc/nginx/nginx.conf
phptune_nginx_args: []
phptune_nginx_dropin_dir: /etc/nginx/conf.d
phptune_nginx_service: nginx
phptune_nginx_reload: systemd
phptune_nginx_master_pattern: "^nginx: master process "
# MariaDB: the server binary and its --defaults-file arguments (for
# mariadbd --help --verbose), the client and socket root logs in through
# (unix_socket), and the directory my.cnf includes last.
phptune_mariadb_server: /usr/sbin/mariadbd
phptune_mariadb_defaults_args: []
phptune_mariadb_client: /usr/bin/mariadb
phptune_mariadb_socket: /run/mysqld/mysqld.sock
phptune_mariadb_dropin_dir: /etc/mysql/mariadb.conf.d
phptune_mariadb_client_argv: ["{{ phptune_mariadb_client }}", "--no-defaults", "--socket={{ phptune_mariadb_socket }}", "--user=root", "--batch", "--skip-column-names"]
# An http:// URL on the host's loopback that must answer after the reload
# with the status it had before ("" for none).
phptune_check_url: ""
phptune_settle_seconds: 5
`

const tasksMain = `# Applies the drop-ins as phptune apply does; any failure puts the
# previous files and MariaDB's previous values back and reloads.
- name: Refuse a check URL off loopback
  ansible.builtin.assert:
    that: phptune_check_url is match('^http://(127\\.0\\.0\\.1|localhost|\\[::1\\])([:/]|$)')
    fail_msg: "phptune_check_url {{ phptune_check_url }}: give an http:// URL on loopback"
  when: phptune_check_url | length > 0

- name: Read the drop-ins' previous content
  ansible.builtin.slurp:
    src: "{{ item.dest }}"
  loop: "{{ phptune_dropins + phptune_nginx_dropins + phptune_mariadb_dropins }}"
  register: phptune_previous
  failed_when: false

- name: MariaDB's live values before the change
  ansible.builtin.command:
    argv: "{{ phptune_mariadb_client_argv + ['-e', 'SELECT ' + (phptune_mariadb_vars | map('regex_replace', '^', '@@GLOBAL.') | join(', '))] }}"
  register: phptune_mariadb_before
  changed_when: false
  check_mode: false
  when: phptune_mariadb_vars | length > 0

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
      loop: "{{ phptune_dropins + phptune_nginx_dropins + phptune_mariadb_dropins }}"
      register: phptune_written

    - name: Which servers' drop-ins changed
      ansible.builtin.set_fact:
        phptune_changed: "{{ phptune_written.results | selectattr('changed') | map(attribute='item.dest') | list }}"

    - name: Check php-fpm's whole configuration
      ansible.builtin.command:
        argv: ["{{ phptune_fpm_binary }}", "-t", "-y", "{{ phptune_fpm_conf }}"]
      environment: "{{ phptune_fpm_environment }}"
      changed_when: false
      when: phptune_changed | intersect(phptune_dropins | map(attribute='dest')) | length > 0 and not ansible_check_mode

    - name: Check nginx's whole configuration
      ansible.builtin.command:
        argv: "{{ [phptune_nginx_binary, '-t', '-c', phptune_nginx_conf] + phptune_nginx_args }}"
      changed_when: false
      when: phptune_changed | intersect(phptune_nginx_dropins | map(attribute='dest')) | length > 0 and not ansible_check_mode

    - name: Check MariaDB's whole configuration
      ansible.builtin.command:
        argv: "{{ [phptune_mariadb_server] + phptune_mariadb_defaults_args + ['--help', '--verbose'] }}"
      changed_when: false
      when: phptune_changed | intersect(phptune_mariadb_dropins | map(attribute='dest')) | length > 0 and not ansible_check_mode

    - name: Reload php-fpm
      ansible.builtin.include_tasks: reload.yml
      when: phptune_changed | intersect(phptune_dropins | map(attribute='dest')) | length > 0 and not ansible_check_mode

    - name: Reload nginx
      ansible.builtin.include_tasks: reload-nginx.yml
      when: phptune_changed | intersect(phptune_nginx_dropins | map(attribute='dest')) | length > 0 and not ansible_check_mode

    - name: Set MariaDB's variables live
      ansible.builtin.include_tasks: mariadb-set.yml
      vars:
        phptune_mariadb_target: "{{ phptune_mariadb_values }}"
      when: phptune_mariadb_vars | length > 0 and not ansible_check_mode

    - name: Health check
      ansible.builtin.include_tasks: health.yml
      when: phptune_written is changed and not ansible_check_mode

  rescue:
    # Each step of the way back runs even when one before it failed (a
    # failure shows as "ignoring" above); the servers reload before
    # MariaDB's values, which need the database to answer.
    - name: Put the previous drop-ins back
      ansible.builtin.copy:
        content: "{{ item.content | b64decode }}"
        dest: "{{ item.item.dest }}"
        owner: root
        group: root
        mode: "0644"
      loop: "{{ phptune_previous.results }}"
      when: item.content is defined
      ignore_errors: true

    - name: Remove the drop-ins that were not there
      ansible.builtin.file:
        path: "{{ item.item.dest }}"
        state: absent
      loop: "{{ phptune_previous.results }}"
      when: item.content is not defined
      ignore_errors: true

    - name: Reload php-fpm with the previous configuration
      ansible.builtin.include_tasks:
        file: reload.yml
        apply:
          ignore_errors: true
      vars:
        phptune_start_if_down: true
      when: phptune_dropins | length > 0

    - name: Reload nginx with the previous configuration
      ansible.builtin.include_tasks:
        file: reload-nginx.yml
        apply:
          ignore_errors: true
      when: phptune_nginx_dropins | length > 0

    - name: Put MariaDB's previous values back
      ansible.builtin.include_tasks:
        file: mariadb-set.yml
        apply:
          ignore_errors: true
      vars:
        phptune_mariadb_target: "{{ phptune_mariadb_before.stdout.split('\t') }}"
      when: phptune_mariadb_vars | length > 0 and phptune_mariadb_before.stdout is defined

    - name: Fail the host
      ansible.builtin.fail:
        msg: >-
          phptune: "{{ ansible_failed_task.name }}" failed
          ({{ ansible_failed_result.msg | default('') }} {{ ansible_failed_result.stderr | default('') }} {{ ansible_failed_result.stdout | default('') }});
          the previous configuration was put back (a step of that marked "ignoring" above did not complete: finish it by hand)
`

const tasksReload = `# Reloads php-fpm gracefully; with phptune_start_if_down (a rollback)
# starts it again when a reload killed it.
- name: Reload php-fpm (systemd)
  ansible.builtin.systemd:
    name: "{{ phptune_fpm_service }}"
    state: reloaded # starts it when a reload killed it
  when: phptune_fpm_reload == 'systemd'

- name: Find php-fpm's master (its title names the configuration; owned by root)
  ansible.builtin.command:
    argv: [pgrep, -U, root, -u, root, -f, "^php-fpm: master process \\({{ phptune_fpm_conf | regex_escape }}\\)"]
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

const tasksReloadNginx = `# Reloads nginx gracefully (its old workers finish their requests).
- name: Reload nginx (systemd)
  ansible.builtin.systemd:
    name: "{{ phptune_nginx_service }}"
    state: reloaded
  when: phptune_nginx_reload == 'systemd'

- name: Find nginx's master (its title; owned by root)
  ansible.builtin.command:
    argv: [pgrep, -U, root, -u, root, -f, "{{ phptune_nginx_master_pattern }}"]
  register: phptune_nginx_master
  changed_when: false
  failed_when: phptune_nginx_master.stdout_lines | length != 1
  when: phptune_nginx_reload == 'signal'

- name: Reload nginx (SIGHUP to its master)
  ansible.builtin.command:
    argv: [kill, -HUP, "{{ phptune_nginx_master.stdout_lines | first }}"]
  when: phptune_nginx_reload == 'signal'
`

const tasksMariaDBSet = `# Sets phptune_mariadb_vars to phptune_mariadb_target live (numbers
# only; a warning, such as a value the server truncates, fails) and reads
# them back.
- name: MariaDB's values are numbers
  ansible.builtin.assert:
    that: phptune_mariadb_target | length == phptune_mariadb_vars | length and phptune_mariadb_target | select('match', '^[0-9]+$') | list | length == phptune_mariadb_vars | length
    fail_msg: "MariaDB values {{ phptune_mariadb_target }} for {{ phptune_mariadb_vars }}: want one number each"

- name: Set MariaDB's variables (SET GLOBAL)
  ansible.builtin.command:
    argv: "{{ phptune_mariadb_client_argv + ['-e', 'SET GLOBAL ' + (phptune_mariadb_vars | zip(phptune_mariadb_target) | map('join', '=') | join(', ')) + '; SHOW WARNINGS'] }}"
  register: phptune_mariadb_set
  failed_when: phptune_mariadb_set.rc != 0 or phptune_mariadb_set.stdout | length > 0

- name: Read MariaDB's variables back
  ansible.builtin.command:
    argv: "{{ phptune_mariadb_client_argv + ['-e', 'SELECT ' + (phptune_mariadb_vars | map('regex_replace', '^', '@@GLOBAL.') | join(', '))] }}"
  register: phptune_mariadb_now
  changed_when: false
  failed_when: phptune_mariadb_now.rc != 0 or phptune_mariadb_now.stdout.split('\t') != phptune_mariadb_target
`

const tasksHealth = `# The reloaded servers serve: php-fpm's master runs and the check URL
# answers with the status it had before.
- name: Let the reload settle
  ansible.builtin.wait_for:
    timeout: "{{ phptune_settle_seconds | int }}"

- name: php-fpm's master runs
  ansible.builtin.command:
    argv: [pgrep, -U, root, -u, root, -f, "^php-fpm: master process \\({{ phptune_fpm_conf | regex_escape }}\\)"]
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
