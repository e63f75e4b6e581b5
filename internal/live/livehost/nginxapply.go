package livehost

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/base/unidiff"
	"github.com/phptune/phptune/internal/model/knob"
)

// NginxDropInName is the drop-in apply writes into a directory nginx
// includes at http level: after the distro's files.
const NginxDropInName = "zz-phptune.conf"

// NginxChanges is what apply does with a recommendation's nginx knobs:
// the http-level ones nginx accepts from an included file, and that no
// other file sets at http level already, go into a drop-in; everything
// else is an exact patch of the user's files, printed and never applied.
type NginxChanges struct {
	DropInPath string
	DropIn     []byte   // nil: no drop-in needed
	DropKnobs  []string // knob=value in the drop-in
	// Patched holds each patched file's new content by its real path
	// (the patch's result, for checking it), Patch the unified diff of
	// them all with paths relative to the host's root (for patch -p0 run
	// there).
	Patched    map[string][]byte
	Patch      string
	PatchKnobs []string
	// Manual are knobs neither can carry; Notes say what a reader of the
	// plan should know (servers that keep their own access_log, say).
	Manual []string
	Notes  []string
}

// nginxEdit replaces File's bytes [start,end) with text.
type nginxEdit struct {
	start, end int
	text       string
}

// ComposeNginx decides, for each nginx knob rec sets away from the
// distro's defaults, whether the drop-in carries it or a patch does.
// The drop-in goes into the directory of the first http-level include
// glob that would read a file named NginxDropInName; it may carry
// keepalive_timeout when no other file sets it at http level (nginx
// refuses a duplicate in one context) and access_log off (allowed beside
// other access_log lines: it turns off the level's logs). Main-context
// and events directives and listen parameters cannot go in an
// http-level file: they are patched where they are set (or added after
// worker_processes, inside events{}, on each address's default_server
// listen). read gives a file's real path (Debian's sites-enabled holds
// links: patch(1) refuses to write through one, so the patch names the
// file the link leads to) and its current content, which must still be
// what nginx -T dumped. root is the host's root: the patch's paths are
// relative to it.
func ComposeNginx(c *NginxConf, rec knob.Config, root string, read func(string) (real string, text []byte, err error)) (*NginxChanges, error) {
	out := &NginxChanges{Patched: map[string][]byte{}}
	changed := map[string]string{}
	for _, ch := range knob.Diff(knob.Defaults(), rec) {
		if k, err := knob.Lookup(ch.Knob); err == nil && k.Component == knob.Nginx && rec.Relevant(ch.Knob) {
			changed[ch.Knob] = ch.To
		}
	}
	if len(changed) == 0 {
		return out, nil
	}
	out.DropInPath = nginxDropInDir(c)
	n := &nginxComposer{c: c, out: out, changed: changed, edits: map[string][]nginxEdit{}}
	for _, k := range knob.All() {
		v, ok := changed[k.Name]
		if !ok {
			continue
		}
		switch k.Name {
		case "nginx.keepalive_timeout":
			n.keepaliveTimeout(k.Name, v)
		case "nginx.access_log":
			if v == "off" {
				n.accessLogOff(k.Name, v)
			}
		case "nginx.worker_processes", "nginx.worker_cpu_affinity", "nginx.worker_rlimit_nofile":
			n.mainLevel(k, v)
		case "nginx.worker_connections", "nginx.multi_accept":
			if err := n.eventsLevel(k, v); err != nil {
				return nil, err
			}
		case "nginx.listen_backlog", "nginx.reuseport":
			// One listen per address carries its options.
			for _, d := range optionListens(c) {
				args := listenArgs(d.Args, changed)
				n.patch(k.Name, d.File, nginxEdit{d.Start, d.End, "listen " + strings.Join(args, " ") + ";"})
			}
		default:
			out.Manual = append(out.Manual, k.Name+"="+v)
		}
	}
	if n.drop.Len() > 0 {
		out.DropIn = []byte("# Written by phptune apply: http-level settings, read after nginx.conf's own.\n# Undo: phptune rollback (or remove this file, nginx -t, and reload nginx).\n" + n.drop.String())
	}
	if err := n.patchFiles(root, read); err != nil {
		return nil, err
	}
	return out, nil
}

// nginxComposer gathers the drop-in's lines and the edits of the files
// nginx -T showed while ComposeNginx goes through the changed knobs.
type nginxComposer struct {
	c       *NginxConf
	out     *NginxChanges
	changed map[string]string // knob -> its new value
	edits   map[string][]nginxEdit
	drop    strings.Builder
}

// patch adds an edit of file for knob name.
func (n *nginxComposer) patch(name string, file string, e nginxEdit) {
	n.edits[file] = append(n.edits[file], e)
	n.out.PatchKnobs = appendOnce(n.out.PatchKnobs, name+"="+n.changed[name])
}

// elsewhere returns the http-level directives name outside the drop-in.
func (n *nginxComposer) elsewhere(name string) []NginxDirective {
	var ds []NginxDirective
	for _, d := range n.c.HTTPDirectives(name) {
		if d.File != n.out.DropInPath {
			ds = append(ds, d)
		}
	}
	return ds
}

// httpLevel sets line of knob name (value v) at http level: in the
// drop-in, or at the top of the http block when there is no drop-in.
func (n *nginxComposer) httpLevel(name, v, line string) {
	c := n.c
	if n.out.DropInPath != "" {
		n.drop.WriteString(line + "\n")
		n.out.DropKnobs = append(n.out.DropKnobs, name+"="+v)
	} else if c.HTTPBlock != nil {
		n.patch(name, c.HTTPBlock.File, afterOpen(c, c.HTTPBlock, c.HTTP, line))
	}
}

// keepaliveTimeout replaces the http level's keepalive_timeout where it
// is set (nginx refuses a second one), else sets it at http level, and
// notes the servers and locations that keep their own.
func (n *nginxComposer) keepaliveTimeout(name, v string) {
	line := "keepalive_timeout " + v + ";"
	if ds := n.elsewhere("keepalive_timeout"); len(ds) > 0 {
		d := ds[len(ds)-1]
		n.patch(name, d.File, nginxEdit{d.Start, d.End, line})
	} else {
		n.httpLevel(name, v, line)
	}
	for _, d := range serverDirectives(n.c, "keepalive_timeout") {
		n.out.Notes = append(n.out.Notes, fmt.Sprintf("%s sets keepalive_timeout %s for its server or location, which keeps it: the http level's does not apply there", d.At(), strings.Join(d.Args, " ")))
	}
}

// accessLogOff turns the http level's access logs off, and notes the
// servers that keep logging with their own.
func (n *nginxComposer) accessLogOff(name, v string) {
	n.httpLevel(name, v, "access_log off;")
	for _, s := range n.c.Servers {
		for _, d := range s.AccessLogs {
			if d.Args[0] != "off" {
				n.out.Notes = append(n.out.Notes, fmt.Sprintf("the server at %s:%d keeps logging: its own access_log at %s overrides the http level's", s.File, s.Line, d.At()))
			}
		}
	}
}

// mainLevel sets a main-context directive where it is set, else after
// worker_processes, else at the top of nginx.conf.
func (n *nginxComposer) mainLevel(k knob.Knob, v string) {
	c := n.c
	line := k.Directive + " " + v + ";"
	if ds := c.MainDirectives(k.Directive); len(ds) > 0 {
		d := ds[len(ds)-1]
		n.patch(k.Name, d.File, nginxEdit{d.Start, d.End, line})
	} else if ds := c.MainDirectives("worker_processes"); len(ds) > 0 {
		d := ds[len(ds)-1]
		n.patch(k.Name, d.File, nginxEdit{d.End, d.End, "\n" + indentOf(c.Text[d.File], d.Start) + line})
	} else {
		n.patch(k.Name, c.Main, nginxEdit{0, 0, line + "\n"})
	}
}

// eventsLevel sets an events directive where it is set, else at the top
// of the events block, which must exist.
func (n *nginxComposer) eventsLevel(k knob.Knob, v string) error {
	c := n.c
	line := k.Directive + " " + v + ";"
	if c.EventsBlock == nil {
		return fmt.Errorf("%s has no events block for %s", c.Main, k.Directive)
	}
	if ds := c.EventsDirectives(k.Directive); len(ds) > 0 {
		d := ds[len(ds)-1]
		n.patch(k.Name, d.File, nginxEdit{d.Start, d.End, line})
	} else {
		n.patch(k.Name, c.EventsBlock.File, afterOpen(c, c.EventsBlock, c.Events, line))
	}
	return nil
}

// patchFiles applies the edits to each file's current content, which
// must still be what nginx -T dumped, into out's patched files and its
// patch (paths relative to root).
func (n *nginxComposer) patchFiles(root string, read func(string) (real string, text []byte, err error)) error {
	c, out := n.c, n.out
	files := make([]string, 0, len(n.edits))
	for f := range n.edits {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		real, disk, err := read(f)
		if err != nil {
			return err
		}
		if !bytes.Equal(disk, c.Text[f]) {
			return fmt.Errorf("%s changed since nginx -T read it: run apply again", f)
		}
		b := disk
		for _, e := range dedupEdits(n.edits[f]) {
			next := append([]byte{}, b[:e.start]...)
			next = append(next, e.text...)
			b = append(next, b[e.end:]...)
		}
		out.Patched[real] = b
		rel := relTo(root, real)
		out.Patch += unidiff.Diff(rel, rel, unidiff.Lines(c.Text[f]), unidiff.Lines(b), 3)
	}
	return nil
}

// nginxDropInDir is the drop-in's path: in the directory of the first
// http-level include glob that would read it ("" when none would).
func nginxDropInDir(c *NginxConf) string {
	for _, inc := range c.HTTPIncludes {
		p := filepath.Join(filepath.Dir(inc.Glob), NginxDropInName)
		if ok, _ := filepath.Match(inc.Glob, p); ok && !strings.ContainsAny(filepath.Dir(inc.Glob), "*?[") {
			return p
		}
	}
	return ""
}

// afterOpen inserts line as the first directive of block, indented as
// its first child is (a tab when it has none).
func afterOpen(c *NginxConf, block *NginxDirective, children []NginxDirective, line string) nginxEdit {
	indent := "\t"
	for _, d := range children {
		if d.File == block.File {
			indent = indentOf(c.Text[d.File], d.Start)
			break
		}
	}
	return nginxEdit{block.BodyStart, block.BodyStart, "\n" + indent + line}
}

// indentOf is the blanks that start the line holding offset.
func indentOf(text []byte, offset int) string {
	start := bytes.LastIndexByte(text[:offset], '\n') + 1
	i := start
	for i < offset && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return string(text[start:i])
}

// optionListens are the listen directives that carry their address's
// options (nginx takes backlog= and reuseport once per address): per
// address, the default_server one, else the first.
func optionListens(c *NginxConf) []NginxDirective {
	chosen := map[string]NginxDirective{}
	var order []string
	for _, s := range c.Servers {
		for _, d := range s.Listens {
			addr := d.Args[0]
			cur, seen := chosen[addr]
			if !seen {
				order = append(order, addr)
			}
			if !seen || !hasArg(cur.Args, "default_server") && hasArg(d.Args, "default_server") {
				chosen[addr] = d
			}
		}
	}
	var out []NginxDirective
	for _, a := range order {
		out = append(out, chosen[a])
	}
	return out
}

func hasArg(args []string, a string) bool {
	for _, x := range args {
		if x == a || x == "default" && a == "default_server" {
			return true
		}
	}
	return false
}

// listenArgs is a listen's arguments with backlog= and reuseport as
// changed says (the other knob's state kept).
func listenArgs(args []string, changed map[string]string) []string {
	var out []string
	for _, a := range args {
		if _, ok := changed["nginx.listen_backlog"]; ok && strings.HasPrefix(a, "backlog=") {
			continue
		}
		if _, ok := changed["nginx.reuseport"]; ok && a == "reuseport" {
			continue
		}
		out = append(out, a)
	}
	if v, ok := changed["nginx.listen_backlog"]; ok {
		out = append(out, "backlog="+v)
	}
	if changed["nginx.reuseport"] == "on" {
		out = append(out, "reuseport")
	}
	return out
}

// dedupEdits drops repeated edits (the same listen changed for two
// knobs keeps the last text, which carries both) and sorts them from
// the end of the file, so that earlier offsets stay valid.
func dedupEdits(es []nginxEdit) []nginxEdit {
	byStart := map[[2]int]nginxEdit{}
	var inserts []nginxEdit
	for _, e := range es {
		if e.start == e.end {
			inserts = append(inserts, e)
			continue
		}
		byStart[[2]int{e.start, e.end}] = e
	}
	out := inserts
	for _, e := range byStart {
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start > out[j].start })
	return out
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// relTo is path relative to root, for a patch run there with -p0.
func relTo(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// ReadRealConf is ComposeNginx's reader on a host: the file a
// configuration path leads to (links resolved) and its content, read as
// ReadConfFile reads.
func ReadRealConf(path string) (string, []byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, err
	}
	b, err := ReadConfFile(real)
	return real, b, err
}

// serverDirectives are the directives called name inside the servers
// (their locations included).
func serverDirectives(c *NginxConf, name string) []NginxDirective {
	var out []NginxDirective
	var walk func(ds []NginxDirective)
	walk = func(ds []NginxDirective) {
		for _, d := range ds {
			if d.Name == name {
				out = append(out, d)
			}
			walk(d.Block)
		}
	}
	for _, d := range c.HTTP {
		if d.Name == "server" {
			walk(d.Block)
		}
	}
	return out
}
