package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/live/ansible"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

func init() { register(newExportCmd) }

func newExportCmd(env *Env) *cobra.Command {
	return groupCmd("export", "Write for other tools: an Ansible role for a fleet, a Locust workload for many machines",
		usageErr("Try: phptune export ansible DIR phptune-tune-RUN, or phptune export locust DIR --lab NAME --workload mix", "export needs what to write: ansible or locust"),
		newExportAnsibleCmd(env), newExportLocustCmd(env))
}

func newExportAnsibleCmd(env *Env) *cobra.Command {
	var knobs, pool, version string
	cmd := &cobra.Command{
		Use:     "ansible DIR [TUNE-DIR | --knobs FILE]",
		Short:   "Write an Ansible playbook and role that apply a recommendation to a fleet as phptune apply does",
		Long:    exportAnsibleLong,
		Example: exportAnsibleExample,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			source := knobs
			result := ""
			if len(args) == 2 {
				if knobs != "" {
					return usageErr("Give one of them", "export ansible takes a tune's directory or --knobs FILE, not both")
				}
				knobs = filepath.Join(args[1], "recommended.knobs")
				result = filepath.Join(args[1], "result.json")
				source = args[1]
			}
			if knobs == "" {
				return usageErr("Try: phptune export ansible DIR phptune-tune-RUN, or --knobs recommended.knobs", "export ansible needs a recommendation")
			}
			_, rec, err := knobConfig(knobs, nil)
			if err != nil {
				return err
			}
			if version == "" {
				if version, err = tuneBranch(result); err != nil {
					return err
				}
			}
			if version == "" {
				bin, err := phpfpm.Find()
				if err != nil {
					return usageErr("Name the hosts' PHP branch: --php-version 8.2", "the hosts' PHP version: no tune result says it and %v", err)
				}
				version = bin.Version
			}
			files, err := ansible.Role(rec, ansible.Options{Pool: pool, PHPVersion: version, Source: source})
			if err != nil {
				return usageErr("See what the recommendation holds: phptune apply --dry-run", "%v", err)
			}
			if err := writeNewDir(dir, files); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Wrote the role for pool %s on PHP %s to %s (%d files). Try: cd %s && ansible-playbook -i INVENTORY playbook.yml --check --diff\n",
				pool, version, dir, len(files), dir)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&knobs, "knobs", "", "the recommendation: a knob file (KNOB=VALUE lines, as recommended.knobs)")
	fl.StringVar(&pool, "pool", "www", "the php-fpm pool the drop-in changes on every host")
	fl.StringVar(&version, "php-version", "", "the hosts' PHP branch, e.g. 8.2 (default: the one the tune measured, or the installed php-fpm's)")
	return cmd
}

// tuneBranch is the PHP branch ("8.2") a tune's result.json says it
// measured on; "" when result is "" or names none.
func tuneBranch(result string) (string, error) {
	v, err := tuneFPMVersion(result)
	return knob.Branch(v), err
}

// writeNewDir writes files under dir, which must not exist yet or be an
// empty directory of yours only you can write (outdir.Create): the role's
// tasks run as root on every host, so nothing of another account's is
// taken, and no file is written through a link.
func writeNewDir(dir string, files map[string][]byte) error {
	d, err := outdir.Create(dir)
	if err != nil {
		var re *outdir.RefusedError
		if errors.As(err, &re) {
			return usageErr("Give a new directory: phptune creates it", "%v", err)
		}
		return err
	}
	defer d.CloseRemovingIfEmpty()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := d.WriteFile(name, files[name]); err != nil {
			return err
		}
	}
	return nil
}
