package recommend

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnitFilesGolden: a Unit recommendation is php.ini for the embed
// SAPI's conf.d and Unit's settings as JSON with the curl lines that apply
// them; no php-fpm pool, no nginx or Apache file.
func TestUnitFilesGolden(t *testing.T) {
	start := config(t, "server=unit")
	for _, c := range []struct {
		name string
		set  []string
	}{
		{"unit-defaults", []string{"server=unit"}},
		{"unit-tuned", []string{"server=unit", "unit.pm=dynamic", "unit.processes=12", "unit.spare_processes=3", "unit.max_requests=1000", "unit.listen_backlog=1024", "opcache.validate_timestamps=off"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := Files(start, config(t, c.set...), Target{PHPVersion: "8.2"})
			for _, f := range []string{PoolFile, NginxFile, ApacheFile} {
				if _, ok := files[f]; ok {
					t.Errorf("%s written for server=unit", f)
				}
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(files[UnitFile]), &doc); err != nil {
				t.Fatalf("%s is not JSON: %v", UnitFile, err)
			}
			if !strings.Contains(files[IniFile], "/etc/php/8.2/embed/conf.d/99-phptune.ini") {
				t.Errorf("php.ini does not say where Unit's PHP reads it:\n%s", files[IniFile])
			}
			checkGolden(t, c.name, files)
		})
	}
}
