package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/report"
)

// adviseExtras are advise's opcache reading, the stored tune beside it
// and its report files.
type adviseExtras struct {
	opcache    bool
	opcacheDir string
	tune       string
	html       string
	outDir     string
}

func (x *adviseExtras) addFlags(fl *pflag.FlagSet) {
	fl.BoolVar(&x.opcache, "opcache", false, "read each master's opcache through a one-shot status script (written into a private directory under --opcache-dir, removed afterwards)")
	fl.StringVar(&x.opcacheDir, "opcache-dir", "/run", "with --opcache, where the status script's private directory is made: a directory only root can write, that the pools can read")
	fl.StringVar(&x.tune, "tune", "", "put this stored tune (its run ID) beside the advice (default: the newest tune of the host's PHP version in the results database)")
	fl.StringVar(&x.html, "html", "", "write the advice as an offline HTML page to this file")
	fl.StringVarP(&x.outDir, "output", "o", "", "write advice.json, advice.html and advice.txt into this new (or empty) directory of yours")
}

// check refuses bad flags before anything is read.
func (x *adviseExtras) check() error {
	if x.opcache {
		if err := livehost.CheckScriptDir(x.opcacheDir); err != nil {
			return usageErr("Give --opcache-dir a directory owned by root that only root can write (every directory above it too), e.g. /run", "--opcache-dir %v", err)
		}
	}
	if x.tune != "" {
		if !store.Exists(resultsDBPath()) {
			return usageErr("Run phptune tune first, or leave out --tune", "--tune %s: there is no results database (%s)", x.tune, resultsDBPath())
		}
	}
	if x.html != "" {
		if !outdir.ParentIsDir(x.html) {
			return usageErr("Give a file in an existing directory", "--html %s: its directory does not exist", x.html)
		}
	}
	if x.outDir != "" {
		if err := checkOutDirFor(x.outDir, "", "advise"); err != nil {
			return err
		}
	}
	return nil
}

// extend adds the stored tune and the opcache readings to a.
func (x *adviseExtras) extend(env *Env, a *advise.Advice, masters []livehost.Master, prefix string) error {
	version := ""
	if len(masters) > 0 {
		version = masters[0].PHPBranch()
	}
	t, runID, selected, err := x.storedTune(env.Ctx, version)
	if err != nil {
		return err
	}
	var measured []results.Decision
	if t != nil {
		measured = t.Decisions
	}
	if x.opcache {
		for _, m := range masters {
			oa, found := livehost.ReadMasterOpcache(env.Ctx, m, prefix, x.opcacheDir, measured)
			a.Opcache = append(a.Opcache, oa)
			a.Findings = append(a.Findings, found...)
		}
	}
	if t != nil {
		a.Tune = advise.CompareTune(*a, t, runID, selected)
	}
	sort.SliceStable(a.Findings, func(i, j int) bool { return a.Findings[i].Severity == "warning" && a.Findings[j].Severity != "warning" })
	return nil
}

// storedTune finds the tune to put beside the advice: --tune's, or the
// newest finished tune of the host's PHP version with a pool size.
// Nothing (and no error) when there is no database or no such tune.
func (x *adviseExtras) storedTune(ctx context.Context, version string) (*results.Tune, string, string, error) {
	path := resultsDBPath()
	if !store.Exists(path) {
		return nil, "", "", nil // advise creates nothing
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, "", "", err
	}
	defer db.Close()
	// A tune of a server without php-fpm (mod_php, Unit) sized no pool.
	hasSize := func(t *results.Tune) bool {
		return t != nil && t.Recommended["pm.max_children"] != "" && (t.Server == "" || knob.RunsFPM(t.Server))
	}
	if x.tune != "" {
		r, err := db.Run(ctx, x.tune)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, "", "", usageErr("List the stored runs with: phptune report --list", "--tune %s: no such run in %s", x.tune, path)
			}
			return nil, "", "", err
		}
		switch {
		case r.Kind != store.KindTune || !hasSize(r.Result):
			return nil, "", "", usageErr("Give a finished tune's run ID: phptune report --list", "--tune %s is a %s run without a recommended pool size", x.tune, r.Kind)
		case version != "" && !knob.SameBranch(advise.TunePHP(r.Result), version):
			return nil, "", "", usageErr("Give a tune measured on this host's PHP, or tune again here", "--tune %s was measured on PHP %s; this host's php-fpm is %s", x.tune, orUnknown(advise.TunePHP(r.Result)), version)
		}
		return r.Result, r.ID, "--tune " + r.ID, nil
	}
	if version == "" {
		return nil, "", "", nil
	}
	runs, err := db.Runs(ctx)
	if err != nil {
		return nil, "", "", err
	}
	for _, r := range runs { // newest first
		if r.Kind == store.KindTune && r.Status == store.StatusDone && hasSize(r.Result) && knob.SameBranch(advise.TunePHP(r.Result), version) {
			return r.Result, r.ID, fmt.Sprintf("the newest finished tune of PHP %s in %s (choose another with --tune RUN-ID)", version, path), nil
		}
	}
	return nil, "", "", nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unrecorded version"
	}
	return s
}

// printExtras writes the opcache knobs and the stored tune after the
// advice's text.
func printExtras(w io.Writer, a advise.Advice) {
	for _, o := range a.Opcache {
		if len(o.Knobs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nOpcache of %s (shared by pools %s): put these in a knob file and run phptune apply --fpm-config %s --knobs FILE (it writes %s in PHP's conf.d):\n%s\n",
			o.Master, strings.Join(o.Pools, ", "), o.Master, livehost.IniDropInName, strings.Join(o.Knobs, "\n"))
	}
	if t := a.Tune; t != nil {
		fmt.Fprintf(w, "\nBeside the stored tune %s (%s):\n%s\n", t.RunID, t.Selected, t.Summary)
		if t.Verdict.Sentence != "" {
			fmt.Fprintf(w, "The tune's verdict: %s\n", t.Verdict.Sentence)
		}
		for _, p := range t.Pools {
			fmt.Fprintf(w, "  pool %s: configured %d, advise %d, tune %d: %s\n", p.Pool, p.Configured, p.Advise, p.Tune, p.Why)
		}
	}
}

// adviceFiles are the recommended knob files and the drop-ins apply
// would write from them, for the report.
func adviceFiles(a advise.Advice, prefix, iniDir string) []report.AdviceFile {
	var out []report.AdviceFile
	for _, p := range a.Pools {
		if !p.Changed() {
			continue
		}
		lines := poolKnobs(p)
		out = append(out, report.AdviceFile{Name: "pool " + p.Pool + ": knob file (phptune apply --pool " + p.Pool + " --knobs FILE)", Text: strings.Join(lines, "\n") + "\n"})
		if d := livehost.AdviceDropIns(p.Master, prefix, p.Pool, iniDir, lines); d != nil && d.Pool != nil {
			out = append(out, report.AdviceFile{Name: d.PoolPath, Text: string(d.Pool)})
		}
	}
	for _, o := range a.Opcache {
		if len(o.Knobs) == 0 {
			continue
		}
		out = append(out, report.AdviceFile{Name: "opcache of " + o.Master + ": knob file (phptune apply --knobs FILE)", Text: strings.Join(o.Knobs, "\n") + "\n"})
		if len(o.Pools) > 0 {
			if d := livehost.AdviceDropIns(o.Master, prefix, o.Pools[0], iniDir, o.Knobs); d != nil && d.Ini != nil {
				out = append(out, report.AdviceFile{Name: d.IniPath, Text: string(d.Ini)})
			}
		}
	}
	return out
}

// write puts the advice into --html's file and -o's directory.
func (x *adviseExtras) write(env *Env, a advise.Advice, prefix, iniDir string) error {
	if x.html == "" && x.outDir == "" {
		return nil
	}
	var page bytes.Buffer
	if err := report.AdviceHTML(&page, a, adviceFiles(a, prefix, iniDir), time.Now().UTC().Format("2006-01-02 15:04 MST")); err != nil {
		return err
	}
	if x.html != "" {
		// Root may write into a directory others can write (/tmp):
		// a temporary file created without following links, renamed
		// over the name, so a planted link is replaced, never followed.
		if err := outdir.WriteFile(x.html, page.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "advise: wrote %s\n", x.html)
	}
	if x.outDir == "" {
		return nil
	}
	out, err := createOutDir(x.outDir)
	if err != nil {
		return err
	}
	defer out.CloseRemovingIfEmpty()
	js, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	var text bytes.Buffer
	te := *env
	te.Stdout = &text
	printAdvice(&te, a)
	for name, b := range map[string][]byte{"advice.json": append(js, '\n'), "advice.html": page.Bytes(), "advice.txt": text.Bytes()} {
		if err := out.WriteFile(name, b); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stderr, "advise: wrote advice.json, advice.html and advice.txt in %s\n", x.outDir)
	return nil
}
