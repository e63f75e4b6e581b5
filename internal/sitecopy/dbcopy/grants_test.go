package dbcopy

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseGrant(t *testing.T) {
	tests := []struct {
		line string
		want Grant
		err  string
	}{
		{"GRANT USAGE ON *.* TO `wp`@`localhost` IDENTIFIED BY PASSWORD '*0123'",
			Grant{Privileges: []string{"USAGE"}, DB: "*", Table: "*", User: "wp", Host: "localhost"}, ""},
		{"GRANT ALL PRIVILEGES ON `wordpress`.* TO `wp`@`localhost`",
			Grant{Privileges: []string{"ALL PRIVILEGES"}, DB: "wordpress", Table: "*", User: "wp", Host: "localhost"}, ""},
		{"GRANT SELECT, INSERT, UPDATE ON `shop`.`wp_posts` TO `a``b`@`%` WITH GRANT OPTION",
			Grant{Privileges: []string{"SELECT", "INSERT", "UPDATE"}, DB: "shop", Table: "wp_posts", User: "a`b", Host: "%", WithGrant: true}, ""},
		{"GRANT EXECUTE ON PROCEDURE `shop`.`p1` TO `wp`@`127.0.0.1`",
			Grant{Privileges: []string{"EXECUTE"}, Routine: "PROCEDURE", DB: "shop", Table: "p1", User: "wp", Host: "127.0.0.1"}, ""},
		{"grant select on `shop`.* to 'wp'@'localhost'",
			Grant{Privileges: []string{"SELECT"}, DB: "shop", Table: "*", User: "wp", Host: "localhost"}, ""},
		{"GRANT SELECT (`id`, `title`) ON `shop`.`t` TO `wp`@`localhost`", Grant{}, "column privilege"},
		{"GRANT `editor` TO `wp`@`localhost`", Grant{}, "role or proxy"},
		{"REVOKE ALL ON *.* FROM x", Grant{}, "not a GRANT"},
		{"GRANT SELECT ON `shop TO `wp`@`localhost`", Grant{}, "no table"},
		{"GRANT SELECT ON `shop`.* TO `wp`", Grant{}, "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			g, err := ParseGrant(tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("got %+v\nwant %+v", g, tt.want)
			}
		})
	}
}

func TestForDBAndSQL(t *testing.T) {
	var gs []Grant
	for _, l := range []string{
		"GRANT USAGE ON *.* TO `wp`@`localhost` IDENTIFIED BY PASSWORD '*0123'",
		"GRANT PROCESS, SELECT ON *.* TO `wp`@`localhost`",
		"GRANT ALL PRIVILEGES ON `other`.* TO `wp`@`localhost`",
		"GRANT SELECT, INSERT ON `shop`.* TO `wp`@`localhost`",
		"GRANT UPDATE ON `shop`.`posts` TO `wp`@`localhost`",
	} {
		g, err := ParseGrant(l)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	kept, notes := ForDB(gs, "shop")
	var sqls []string
	for _, g := range kept {
		sqls = append(sqls, g.SQL("w'p", "localhost"))
	}
	want := []string{
		"GRANT SELECT ON `shop`.* TO 'w\\'p'@'localhost'",
		"GRANT SELECT, INSERT ON `shop`.* TO 'w\\'p'@'localhost'",
		"GRANT UPDATE ON `shop`.`posts` TO 'w\\'p'@'localhost'",
	}
	if !reflect.DeepEqual(sqls, want) {
		t.Errorf("statements:\n%s\nwant:\n%s", strings.Join(sqls, "\n"), strings.Join(want, "\n"))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "PROCESS") {
		t.Errorf("notes %q, want one naming PROCESS", notes)
	}
}

func TestTargetSQL(t *testing.T) {
	tg := Target{DB: "shop", User: "app", Hosts: []string{"localhost", "127.0.0.1"}}
	tg.Password = secret("pa'ss\\word\n")
	setup, err := tg.SetupSQL()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"CREATE DATABASE IF NOT EXISTS `shop` CHARACTER SET utf8mb4;",
		`CREATE OR REPLACE USER 'app'@'127.0.0.1' IDENTIFIED BY 'pa\'ss\\word\n';`, "USE `shop`;"} {
		if !strings.Contains(setup, w) {
			t.Errorf("setup lacks %q:\n%s", w, setup)
		}
	}
	if g := tg.GrantSQL(); g != "GRANT ALL PRIVILEGES ON `shop`.* TO 'app'@'localhost';\nGRANT ALL PRIVILEGES ON `shop`.* TO 'app'@'127.0.0.1';\n" {
		t.Errorf("grants without production's:\n%s", g)
	}
	for _, bad := range []Target{{DB: "shop", User: "root"}, {DB: "", User: "app"}, {DB: "a/b", User: "app"}, {DB: "shop"}} {
		if _, err := bad.SetupSQL(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// FuzzParseGrant: whatever a line holds, a parsed grant re-renders as a
// statement whose names are quoted (no quote escapes its identifier) and
// whose privileges are words.
func FuzzParseGrant(f *testing.F) {
	for _, s := range []string{"GRANT USAGE ON *.* TO `wp`@`localhost`", "GRANT SELECT ON `a``b`.`c` TO 'x'@'%' WITH GRANT OPTION",
		"GRANT EXECUTE ON FUNCTION `d`.`f` TO `u`@`h`", "GRANT SELECT (`c`) ON `d`.`t` TO `u`@`h`", "GRANT r TO u"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		g, err := ParseGrant(line)
		if err != nil {
			return
		}
		for _, p := range g.Privileges {
			if strings.ContainsAny(p, "`'(),;") {
				t.Fatalf("privilege %q carries quoting", p)
			}
		}
		kept, _ := ForDB([]Grant{g}, "db")
		for _, k := range kept {
			s := k.SQL(g.User, g.Host)
			if !strings.HasPrefix(s, "GRANT ") {
				t.Fatalf("statement %q", s)
			}
			for _, p := range k.Privileges {
				if !dbPrivileges[p] && p != "USAGE" {
					t.Fatalf("kept privilege %q", p)
				}
			}
		}
	})
}
