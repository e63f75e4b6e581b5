package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"

	"github.com/phptune/phptune/internal/live/advise"
)

// advise's page: the pools, the findings with their numbers, the web
// servers in front, MariaDB, opcache, a stored tune beside it, the
// recommended drop-ins. No chart, no script.
var (
	//go:embed assets/advice.html.tmpl
	adviceTmpl string
)

var advicePage = withPageCSS(template.New("advice").Funcs(template.FuncMap{
	"mib":  mib,
	"pct1": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"pct2": func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"hours": func(s int64) string {
		if s < 2*3600 {
			return fmt.Sprintf("%d min", s/60)
		}
		return fmt.Sprintf("%.1f h", float64(s)/3600)
	},
}).Parse(adviceTmpl))

// AdviceFile is a file the advice recommends, as it would be written: a
// knob file for phptune apply, or the drop-in apply writes from it.
type AdviceFile struct{ Name, Text string }

type adviceView struct {
	Title     string
	Generated string
	A         advise.Advice
	Changed   []string
	Files     []AdviceFile
}

// AdviceHTML writes advise's report as one offline page. generated says
// when it was read ("2026-11-26 10:40 UTC").
func AdviceHTML(w io.Writer, a advise.Advice, files []AdviceFile, generated string) error {
	v := adviceView{Title: fmt.Sprintf("phptune advise — %d pools", len(a.Pools)), Generated: generated, A: a, Files: files}
	if len(a.Pools) == 1 {
		v.Title = "phptune advise — pool " + a.Pools[0].Pool
	}
	for _, p := range a.Pools {
		if p.Changed() {
			v.Changed = append(v.Changed, fmt.Sprintf("pool %s pm.max_children %d → %d", p.Pool, p.MaxChildren, p.Recommended))
		}
	}
	for _, o := range a.Opcache {
		for _, k := range o.Knobs {
			v.Changed = append(v.Changed, "opcache "+k)
		}
	}
	if a.MariaDB != nil {
		for _, k := range a.MariaDB.Knobs {
			v.Changed = append(v.Changed, "MariaDB "+k)
		}
	}
	return advicePage.Execute(w, v)
}
