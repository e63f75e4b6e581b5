package flamegraph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func samplePage() Page {
	return Page{
		Title:    "phptune profile: wordpress",
		Subtitle: "nginx-fpm, 8 connections, 10 s",
		Tables: []Table{{Title: "Components", Columns: []string{"component", "share"},
			Rows: [][]string{{"Zend VM executor", "54.1%"}, {"<script>window.pwned=1</script>", "1%"}}}},
		Graphs: []Graph{
			{ID: "native", Title: "Native (perf)", Note: "cpu-clock at 49 Hz.", Folded: map[string]int{
				"php;php_execute_script;zend_execute_scripts;execute_ex":                30,
				"php;php_execute_script;zend_execute_scripts;execute_ex;_emalloc":       5,
				"php;php_execute_script;zend_execute_scripts;execute_ex;zend_hash_find": 10,
				"php;[php-fpm8.2];clear_page_erms_[k]":                                  2,
				"web server;ngx_epoll_process_events;tcp_sendmsg_[k]":                   3,
				"mariadb;</script><script>window.pwned=1</script>":                      1,
			}},
			{ID: "php", Title: "PHP (excimer)", Note: "CPU time, 10 ms period.", Folded: map[string]int{
				"php;index.php;wp;WP_Hook::apply_filters": 7,
				"php;index.php;wp;WP_Query::get_posts":    3,
			}},
		},
	}
}

func TestRenderGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, samplePage()); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/page.html.golden"
	goldentest.Check(t, golden, b.Bytes())
	if strings.Contains(b.String(), "<script>window.pwned") {
		t.Fatal("a frame or cell name was written as markup")
	}
}

func TestTree(t *testing.T) {
	root := Tree(map[string]int{"a;b": 3, "a;c": 1, "a": 2, "d": 10000})
	if root.Value != 10006 || len(root.Children) != 2 {
		t.Fatalf("root %+v", root)
	}
	a := root.Children[0]
	if a.Name != "a" || a.Value != 6 {
		t.Fatalf("a %+v", a)
	}
	// b and c hold less than MinShare of the samples: folded into a.
	if len(a.Children) != 0 {
		t.Fatalf("tiny frames drawn: %+v", a.Children)
	}
	small := Tree(map[string]int{"a;b": 3, "a;c": 1})
	if len(small.Children[0].Children) != 2 || small.Children[0].Children[0].Name != "b" {
		t.Fatalf("children %+v", small.Children[0].Children)
	}
}

func TestRenderRefusesBadID(t *testing.T) {
	if err := Render(&bytes.Buffer{}, Page{Graphs: []Graph{{ID: `x" onload="1`}}}); err == nil {
		t.Fatal("an id with quotes was accepted")
	}
}
