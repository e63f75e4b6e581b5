package cli

import (
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/phpbuild"
)

// The knob php.build names a PHP phptune built. Its valid values come from
// the build cache and a lab resolves them through package phpbuild; the
// knob model and the lab stay free of it (phpbuild imports lab), so the
// CLI connects them here, for every command.
func init() {
	knob.BuildValidator = phpbuild.Validator
	lab.PHPBuilds = phpbuild.ForLab
}
