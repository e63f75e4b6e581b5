package recommend

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/unit"
)

// unitSettings is NGINX Unit's part of rec: the application's processes
// and limits and the listener's backlog, as JSON for Unit's control API
// (Unit has no configuration file to edit). JSON has no comments, so the
// instructions and the values replaced are in "_phptune" members, which
// the curl lines below leave out.
func unitSettings(start, rec knob.Config) string {
	site := unit.Build(rec, unit.Site{Listen: "*:80", DocRoot: "/"})
	app := site.Applications[unit.AppName]
	var changed []string
	for _, ch := range knob.Diff(start, rec) {
		if k, err := knob.Lookup(ch.Knob); err == nil && k.Component == knob.Unit {
			changed = append(changed, fmt.Sprintf("%s (%s): %s, was %s", k.Name, k.Directive, ch.To, ch.From))
		}
	}
	doc := map[string]any{
		"_phptune": map[string]any{
			"what": "NGINX Unit settings for the PHP application APP and its listener, as measured by phptune",
			"apply": []string{
				"curl -X PUT --data-binary '" + jsonOf(app.Processes) + "' --unix-socket /var/run/control.unit.sock http://localhost/config/applications/APP/processes",
				limitsLine(app.Limits),
				fmt.Sprintf("curl -X PUT --data-binary '%d' --unix-socket /var/run/control.unit.sock 'http://localhost/config/listeners/LISTENER/backlog'", rec.Int("unit.listen_backlog")),
			},
			"changed": changed,
		},
		"processes":        app.Processes,
		"limits":           app.Limits,
		"listener_backlog": rec.Int("unit.listen_backlog"),
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err) // plain values: cannot fail
	}
	return string(b) + "\n"
}

func limitsLine(l *unit.Limits) string {
	if l == nil {
		return "curl -X DELETE --unix-socket /var/run/control.unit.sock http://localhost/config/applications/APP/limits/requests   # no request limit"
	}
	return "curl -X PUT --data-binary '" + jsonOf(l) + "' --unix-socket /var/run/control.unit.sock http://localhost/config/applications/APP/limits"
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}
