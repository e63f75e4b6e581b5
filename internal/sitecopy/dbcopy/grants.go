package dbcopy

import (
	"errors"
	"fmt"
	"strings"
)

// Grant is one line of SHOW GRANTS: privileges on an object to an
// account.
type Grant struct {
	Privileges []string // upper case: "SELECT", "ALL PRIVILEGES"
	Routine    string   // "PROCEDURE", "FUNCTION" or "" for tables
	DB, Table  string   // "*" for every one
	User, Host string
	WithGrant  bool
}

// dbPrivileges are the privileges that can be given on one database or
// its tables and routines; a global grant's others (PROCESS, SUPER, FILE,
// RELOAD...) have no meaning inside a lab's copy and are left out.
var dbPrivileges = map[string]bool{
	"ALL": true, "ALL PRIVILEGES": true, "ALTER": true, "ALTER ROUTINE": true, "CREATE": true,
	"CREATE ROUTINE": true, "CREATE TEMPORARY TABLES": true, "CREATE VIEW": true, "DELETE": true,
	"DELETE HISTORY": true, "DROP": true, "EVENT": true, "EXECUTE": true, "INDEX": true, "INSERT": true,
	"LOCK TABLES": true, "REFERENCES": true, "SELECT": true, "SHOW VIEW": true, "TRIGGER": true,
	"UPDATE": true, "SHOW CREATE ROUTINE": true,
}

// ParseGrant reads one line of SHOW GRANTS as MariaDB writes it:
//
//	GRANT privs ON [PROCEDURE|FUNCTION] `db`.`table` TO `user`@`host` [IDENTIFIED BY ...] [WITH GRANT OPTION]
//
// Column privileges (SELECT (col)), roles (GRANT role TO ...) and PROXY
// are refused: the copy does not carry them.
func ParseGrant(line string) (Grant, error) {
	var g Grant
	rest, ok := cutPrefixFold(strings.TrimSpace(line), "GRANT ")
	if !ok {
		return g, fmt.Errorf("not a GRANT: %q", clip(line))
	}
	privs, rest, ok := cutFold(rest, " ON ")
	if !ok {
		return g, errors.New("a role or proxy grant: not carried into the lab")
	}
	for _, p := range strings.Split(privs, ",") {
		p = strings.ToUpper(strings.TrimSpace(p))
		if strings.ContainsAny(p, "(`") {
			return g, fmt.Errorf("a column privilege (%s): not carried into the lab", clip(p))
		}
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r == ' ' || r == '_') }) >= 0 {
			return g, fmt.Errorf("privilege %q is not a privilege's name", clip(p))
		}
		g.Privileges = append(g.Privileges, p)
	}
	for _, r := range []string{"PROCEDURE ", "FUNCTION ", "PACKAGE ", "PACKAGE BODY "} {
		if after, ok := cutPrefixFold(rest, r); ok {
			g.Routine, rest = strings.TrimSpace(r), after
		}
	}
	var err error
	if g.DB, rest, err = ident(rest); err != nil {
		return g, fmt.Errorf("the database of %q: %v", clip(line), err)
	}
	if !strings.HasPrefix(rest, ".") {
		return g, fmt.Errorf("no table after the database in %q", clip(line))
	}
	if g.Table, rest, err = ident(rest[1:]); err != nil {
		return g, fmt.Errorf("the table of %q: %v", clip(line), err)
	}
	if rest, ok = cutPrefixFold(rest, " TO "); !ok {
		return g, fmt.Errorf("no TO in %q", clip(line))
	}
	if g.User, rest, err = ident(rest); err != nil {
		return g, fmt.Errorf("the user of %q: %v", clip(line), err)
	}
	if !strings.HasPrefix(rest, "@") {
		return g, fmt.Errorf("no host after the user in %q", clip(line))
	}
	if g.Host, rest, err = ident(rest[1:]); err != nil {
		return g, fmt.Errorf("the host of %q: %v", clip(line), err)
	}
	g.WithGrant = strings.HasSuffix(strings.ToUpper(rest), " WITH GRANT OPTION")
	return g, nil
}

// ident reads `name` (a doubled backtick is one), 'name', or * at the
// start of s.
func ident(s string) (string, string, error) {
	if strings.HasPrefix(s, "*") {
		return "*", s[1:], nil
	}
	if s == "" || (s[0] != '`' && s[0] != '\'') {
		return "", s, errors.New("not a quoted name")
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i++
				continue
			}
			return b.String(), s[i+1:], nil
		}
		b.WriteByte(s[i])
	}
	return "", s, errors.New("an unterminated name")
}

// ForDB returns the grants of g that concern database db, re-addressed to
// db itself: grants on db.* or its tables and routines as they are, and a
// global one narrowed to db.* with its database-level privileges (USAGE
// alone is none). The notes say what was left out and why.
func ForDB(gs []Grant, db string) (kept []Grant, notes []string) {
	for _, g := range gs {
		switch {
		case g.DB == "*" && g.Routine == "":
			var privs []string
			for _, p := range g.Privileges {
				if dbPrivileges[p] {
					privs = append(privs, p)
				} else if p != "USAGE" {
					notes = append(notes, fmt.Sprintf("global privilege %s left out (the lab's copy holds one database)", p))
				}
			}
			if len(privs) > 0 {
				g.Privileges, g.DB = privs, db
				kept = append(kept, g)
			}
		case g.DB == db:
			for _, p := range g.Privileges {
				if !dbPrivileges[p] && p != "USAGE" {
					notes = append(notes, fmt.Sprintf("privilege %s on %s.%s left out: not one phptune knows", p, g.DB, g.Table))
					g.Privileges = nil
					break
				}
			}
			if len(g.Privileges) > 0 {
				kept = append(kept, g)
			}
		}
	}
	return kept, notes
}

// SQL is the GRANT statement giving g's privileges to user@host.
func (g Grant) SQL(user, host string) string {
	obj := quoteIdent(g.DB) + "."
	if g.Table == "*" {
		obj += "*"
	} else {
		obj += quoteIdent(g.Table)
	}
	if g.Routine != "" {
		obj = g.Routine + " " + obj
	}
	s := fmt.Sprintf("GRANT %s ON %s TO %s@%s", strings.Join(g.Privileges, ", "), obj, sqlString(user), sqlString(host))
	if g.WithGrant {
		s += " WITH GRANT OPTION"
	}
	return s
}

// quoteIdent quotes a name as an SQL identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + sqlEscape(s) + "'" }

// sqlEscape escapes s for the inside of a quoted SQL string (backslash
// escapes on, as the lab's server runs).
func sqlEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`, "\x1a", `\Z`)
	return r.Replace(s)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// cutFold is strings.Cut with sep matched in any case.
func cutFold(s, sep string) (before, after string, found bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sep)], sep) {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
