package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/stack/labprofile"
	"github.com/phptune/phptune/internal/watch/flamegraph"
	"github.com/phptune/phptune/internal/watch/profile"
)

// WriteProfile writes a profile's files into dir: profile.json (every
// figure and the folded stacks), native.folded and php.folded, and
// profile.html (both flame graphs).
func WriteProfile(dir *outdir.Dir, app, workload string, res *labprofile.Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := dir.WriteFile("profile.json", append(b, '\n')); err != nil {
		return err
	}
	page := flamegraph.Page{
		Title:    "phptune profile: " + app,
		Subtitle: fmt.Sprintf("%s, workload %s, %d connections, %d rounds of %.0f s per sampler", res.Server, workload, res.Connections, res.Rounds, res.DurationS),
	}
	if res.Native != nil && res.Native.Samples > 0 {
		n := res.Native
		if err := writeFolded(dir, "native.folded", n.Folded); err != nil {
			return err
		}
		page.Tables = append(page.Tables, shareTable("Native samples by component (every process of the stack)", profile.Top(n.Components, n.Samples, 0)),
			shareTable("PHP workers' native samples by component", profile.Top(n.PHPComponents, n.ByRole[profile.RolePHP], 0)))
		page.Graphs = append(page.Graphs, flamegraph.Graph{ID: "native", Title: "Native stacks (perf)",
			Note: "cpu-clock samples of every process of the stack, rooted at php, web server and mariadb; _[k] frames are the kernel's.", Folded: n.Folded})
	}
	if res.PHP != nil && res.PHP.Samples > 0 {
		p := res.PHP
		if err := writeFolded(dir, "php.folded", p.Folded); err != nil {
			return err
		}
		page.Tables = append(page.Tables, shareTable("PHP functions, self", profile.Top(p.Self, p.Samples, 20)),
			shareTable("PHP functions, inclusive", profile.Top(p.Inclusive, p.Samples, 20)))
		if len(p.Plugins) > 0 {
			page.Tables = append(page.Tables, shareTable("WordPress plugins and themes, inclusive", profile.Top(p.Plugins, p.Samples, 20)))
		}
		page.Graphs = append(page.Graphs, flamegraph.Graph{ID: "php", Title: "PHP stacks (excimer)",
			Note: "excimer samples (" + res.PHPClock + " clock, 10 ms period) of every request the workers served.", Folded: p.Folded})
	}
	var rows [][]string
	for _, f := range res.Findings {
		rows = append(rows, []string{f.Evidence, strings.Join(f.Challenges, " | ")})
	}
	for _, o := range res.Overhead {
		rows = append(rows, []string{"overhead — " + o.Summary(), ""})
	}
	page.Tables = append(page.Tables, flamegraph.Table{Title: "Findings and overhead", Columns: []string{"what was measured", "configurations worth measuring"}, Rows: rows})
	var html bytes.Buffer
	if err := flamegraph.Render(&html, page); err != nil {
		return err
	}
	return dir.WriteFile("profile.html", html.Bytes())
}

// shareTable is a flame graph page's table of entries and their shares.
func shareTable(title string, es []profile.Entry) flamegraph.Table {
	t := flamegraph.Table{Title: title, Columns: []string{"", "samples", "share"}}
	for _, e := range es {
		t.Rows = append(t.Rows, []string{e.Name, fmt.Sprint(e.Samples), fmt.Sprintf("%.1f%%", 100*e.Share)})
	}
	return t
}

// writeFolded writes folded stacks, sorted, as the file name in dir.
func writeFolded(dir *outdir.Dir, name string, f profile.Folded) error {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, f[k])
	}
	return dir.WriteFile(name, []byte(b.String()))
}

// ProfileText prints a profile's top lists, findings and overhead.
func ProfileText(w io.Writer, res *labprofile.Result) {
	if n := res.Native; n != nil && n.Samples > 0 {
		php := n.ByRole[profile.RolePHP]
		fmt.Fprintf(w, "Native samples: %d of the stack (%d PHP, %d web server, %d MariaDB); %d of other processes left out\n",
			n.Samples, php, n.ByRole[profile.RoleWeb], n.ByRole[profile.RoleMariaDB], n.Dropped)
		for _, e := range profile.Top(n.Components, n.Samples, 0) {
			fmt.Fprintf(w, "  %-32s %6.1f%%  %d\n", e.Name, 100*e.Share, e.Samples)
		}
		fmt.Fprintf(w, "PHP workers' native functions (self):\n")
		for _, e := range profile.Top(n.PHPSelf, php, 10) {
			fmt.Fprintf(w, "  %-48s %6.1f%%\n", e.Name, 100*e.Share)
		}
	}
	if res.NativeUnavailable != "" {
		fmt.Fprintf(w, "Native profile: none: %s\n", res.NativeUnavailable)
	}
	if p := res.PHP; p != nil && p.Samples > 0 {
		fmt.Fprintf(w, "\nPHP samples (%s clock): %d\n  self:\n", res.PHPClock, p.Samples)
		for _, e := range profile.Top(p.Self, p.Samples, 10) {
			fmt.Fprintf(w, "    %-50s %6.1f%%\n", e.Name, 100*e.Share)
		}
		fmt.Fprintf(w, "  inclusive:\n")
		for _, e := range profile.Top(p.Inclusive, p.Samples, 10) {
			fmt.Fprintf(w, "    %-50s %6.1f%%\n", e.Name, 100*e.Share)
		}
		if len(p.Plugins) > 0 {
			fmt.Fprintf(w, "  WordPress plugins and themes (inclusive):\n")
			for _, e := range profile.Top(p.Plugins, p.Samples, 10) {
				fmt.Fprintf(w, "    %-50s %6.1f%%\n", e.Name, 100*e.Share)
			}
		}
	}
	if res.PHPUnavailable != "" {
		fmt.Fprintf(w, "PHP profile: none: %s\n", res.PHPUnavailable)
	}
	fmt.Fprintf(w, "\nFindings:\n")
	if len(res.Findings) == 0 {
		fmt.Fprintf(w, "  none above their thresholds\n")
	}
	for _, f := range res.Findings {
		fmt.Fprintf(w, "  - %s\n", f.Evidence)
		if len(f.Challenges) > 0 {
			fmt.Fprintf(w, "    worth measuring: %s\n", strings.Join(f.Challenges, " | "))
		}
	}
	fmt.Fprintf(w, "\nOverhead (against the plain runs of the same rounds):\n")
	for _, o := range res.Overhead {
		fmt.Fprintf(w, "  %s\n", o.Summary())
	}
}
