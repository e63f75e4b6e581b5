// Package flamegraph draws folded stacks as flame graphs in one offline
// HTML page: the stacks are embedded as JSON and drawn by a small script
// of phptune's own (no asset from outside), which zooms into a frame on a
// click and highlights the frames a search matches, with their share.
package flamegraph

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
)

// Graph is one flame graph of a page.
type Graph struct {
	ID     string // the element id: letters, digits and dashes
	Title  string
	Note   string         // one line under the title
	Folded map[string]int // "root;...;leaf" -> samples
}

// Page is a page of flame graphs.
type Page struct {
	Title    string
	Subtitle string
	Graphs   []Graph
	// Tables are extra sections drawn before the graphs (top lists).
	Tables []Table
}

// Table is a titled table of text cells.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
}

// node is a frame of the tree a graph is drawn from: its name, its
// samples (its own and its callees'), its callees by name.
type node struct {
	Name     string  `json:"n"`
	Value    int     `json:"v"`
	Children []*node `json:"c,omitempty"`
	kids     map[string]*node
}

// MinShare is the smallest share of a graph's samples a frame is drawn
// with; smaller ones are folded into their caller, keeping pages small.
const MinShare = 0.0005

// Tree builds the drawn tree of folded stacks: children sorted by name, so
// that equal input gives an equal page.
func Tree(folded map[string]int) *node {
	root := &node{Name: "all", kids: map[string]*node{}}
	for stack, n := range folded {
		if n <= 0 {
			continue
		}
		root.Value += n
		cur := root
		for _, f := range strings.Split(stack, ";") {
			k, ok := cur.kids[f]
			if !ok {
				k = &node{Name: f, kids: map[string]*node{}}
				cur.kids[f] = k
			}
			k.Value += n
			cur = k
		}
	}
	minV := int(float64(root.Value) * MinShare)
	var finish func(n *node)
	finish = func(n *node) {
		for _, k := range n.kids {
			if k.Value > minV || minV == 0 {
				n.Children = append(n.Children, k)
				finish(k)
			}
		}
		sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].Name < n.Children[j].Name })
		n.kids = nil
	}
	finish(root)
	return root
}

// Render writes the page.
func Render(w io.Writer, p Page) error {
	type graphData struct {
		Graph
		Data  template.JS
		Total int
	}
	var gs []graphData
	for _, g := range p.Graphs {
		if !validID(g.ID) {
			return fmt.Errorf("flame graph id %q: use letters, digits and dashes", g.ID)
		}
		t := Tree(g.Folded)
		b, err := json.Marshal(t) // escapes <, > and &: safe inside <script>
		if err != nil {
			return err
		}
		gs = append(gs, graphData{Graph: g, Data: template.JS(b), Total: t.Value})
	}
	return page.Execute(w, struct {
		Page
		Graphs []graphData
	}{p, gs})
}

func validID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1em;color:#222}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .3em}
.sub,.note{color:#555}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:.3em 0}td,th{padding:.15em .6em;border-bottom:1px solid #ddd;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.fg{position:relative;width:100%;overflow:hidden;border:1px solid #ccc;background:#fafafa}
.fg div{position:absolute;height:17px;box-sizing:border-box;border:1px solid #fafafa;font:11px/15px monospace;overflow:hidden;white-space:nowrap;padding-left:2px;cursor:pointer}
.fg div.hit{background:#e040fb !important}
.bar{margin:.4em 0;display:flex;gap:.5em;flex-wrap:wrap;align-items:center}
.bar input{min-width:14em}
</style></head>
<body>
<h1>{{.Title}}</h1>
<p class="sub">{{.Subtitle}}</p>
{{range .Tables}}<h2>{{.Title}}</h2>
<div class="scroll"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $i}} class="n"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table></div>
{{end}}
{{range .Graphs}}<h2>{{.Title}}</h2>
<p class="note">{{.Note}} {{.Total}} samples. Click a frame to zoom in, the top frame to zoom out; search names with a regular expression.</p>
<div class="bar"><input type="search" placeholder="search, e.g. emalloc|_\[k\]" data-for="{{.ID}}" aria-label="search {{.Title}}"> <span class="match" id="{{.ID}}-match"></span></div>
<div class="fg" id="{{.ID}}" data-flame></div>
<script type="application/json" id="{{.ID}}-data">{{.Data}}</script>
{{end}}
<script>
(function () {
  'use strict';
  var H = 17;
  function color(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) { h = (h * 31 + name.charCodeAt(i)) >>> 0; }
    var v = h % 60;
    if (/_\[k\]$/.test(name)) { return 'hsl(' + (20 + v / 3) + ',80%,' + (62 + v / 6) + '%)'; }
    if (/_\[j\]$/.test(name)) { return 'hsl(' + (100 + v / 2) + ',55%,' + (60 + v / 6) + '%)'; }
    if (/^\[/.test(name)) { return 'hsl(0,0%,' + (75 + v / 6) + '%)'; }
    return 'hsl(' + (v / 1.5) + ',75%,' + (58 + v / 5) + '%)';
  }
  function depth(n) {
    var d = 0;
    (n.c || []).forEach(function (k) { d = Math.max(d, depth(k)); });
    return d + 1;
  }
  function draw(box, root, zoom, re) {
    box.textContent = '';
    var chain = [];
    for (var p = zoom; p; p = p.parent) { chain.unshift(p); }
    box.style.height = ((chain.length - 1 + depth(zoom)) * H + 2) + 'px';
    var hits = 0;
    function add(n, x, w, d, matched) {
      var el = document.createElement('div');
      el.style.left = (100 * x) + '%';
      el.style.width = (100 * w) + '%';
      el.style.top = (d * H) + 'px';
      el.style.background = color(n.n);
      var pct = (100 * n.v / root.v).toFixed(2);
      el.title = n.n + ' — ' + n.v + ' samples, ' + pct + '%';
      el.textContent = n.n;
      var hit = re && re.test(n.n);
      if (hit) { el.className = 'hit'; if (!matched) { hits += n.v; } }
      el.addEventListener('click', function () { draw(box, root, n === zoom && n.parent ? n.parent : n, re); });
      box.appendChild(el);
      return hit || matched;
    }
    chain.slice(0, -1).forEach(function (n, d) { add(n, 0, 1, d, false); });
    (function walk(n, x, d, matched) {
      var w = n.v / zoom.v;
      if (w < 0.001) { return; }
      var m = add(n, x, w, d, matched);
      var cx = x;
      (n.c || []).forEach(function (k) { walk(k, cx, d + 1, m); cx += k.v / zoom.v; });
    })(zoom, 0, chain.length - 1, false);
    var out = document.getElementById(box.id + '-match');
    out.textContent = re ? 'matched: ' + (100 * hits / zoom.v).toFixed(2) + '% of the frame shown' : '';
  }
  function link(n, parent) { n.parent = parent; (n.c || []).forEach(function (k) { link(k, n); }); }
  var drawn = 0;
  document.querySelectorAll('[data-flame]').forEach(function (box) {
    var root = JSON.parse(document.getElementById(box.id + '-data').textContent);
    link(root, null);
    draw(box, root, root, null);
    var input = document.querySelector('input[data-for="' + box.id + '"]');
    input.addEventListener('input', function () {
      var re = null;
      try { re = input.value ? new RegExp(input.value) : null; } catch (e) { re = null; }
      draw(box, root, root, re);
    });
    drawn++;
  });
  document.body.setAttribute('data-flames-drawn', String(drawn));
})();
</script>
</body></html>
`))
