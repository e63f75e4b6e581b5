package lab

import (
	"errors"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestPHPFor(t *testing.T) {
	defer func(h func(string) (*PHPBuild, error)) { PHPBuilds = h }(PHPBuilds)
	build := knob.Config{knob.BuildKnob: "0123456789ab"}

	PHPBuilds = nil
	if _, _, err := phpFor(build); err == nil || !strings.Contains(err.Error(), "php.build=distro") {
		t.Errorf("no resolver: %v", err)
	}
	PHPBuilds = func(id string) (*PHPBuild, error) {
		if id != "0123456789ab" {
			return nil, errors.New("no such build")
		}
		return &PHPBuild{ID: id, FPM: "/builds/" + id + "/bin/php-fpm", Ini: []string{"zend_extension=/builds/x/bin/opcache.so"}, Summary: id + " PHP 8.2.32 plain"}, nil
	}
	bin, b, err := phpFor(build)
	if err != nil {
		t.Skipf("no distro php-fpm here: %v", err)
	}
	if b == nil || bin.Path != "/builds/0123456789ab/bin/php-fpm" || bin.CLI == b.FPM {
		t.Errorf("build: bin %+v build %+v", bin, b)
	}
	if _, _, err := phpFor(knob.Config{knob.BuildKnob: "ffffffffffff"}); err == nil || !strings.Contains(err.Error(), "php.build=ffffffffffff") {
		t.Errorf("an unknown build: %v", err)
	}
	if bin, b, err := phpFor(knob.Defaults()); err != nil || b != nil || !strings.HasPrefix(bin.Path, "/usr/sbin/php-fpm") {
		t.Errorf("distro: %+v %+v %v", bin, b, err)
	}

	ini := buildIni(b)
	if !strings.Contains(ini, "zend_extension=/builds/x/bin/opcache.so\n") || !strings.Contains(ini, "php.build=0123456789ab") {
		t.Errorf("build ini:\n%s", ini)
	}
	if ini := buildIni(nil); strings.Contains(ini, "extension=") {
		t.Errorf("the distro's ini loads an extension:\n%s", ini)
	}

	l := &Lab{Dir: "/lab", Config: build}
	if env := strings.Join(l.fpmEnv(), " "); !strings.Contains(env, "PHP_INI_SCAN_DIR=/lab/php ") {
		t.Errorf("a build reads the distro's conf.d: %s", env)
	}
	l.Config = knob.Defaults()
	if env := strings.Join(l.fpmEnv(), " "); !strings.Contains(env, "PHP_INI_SCAN_DIR=:/lab/php ") {
		t.Errorf("the distro's PHP skips its conf.d: %s", env)
	}
}
