package tune

import (
	"bytes"
	"encoding/json"
)

// SiteRecord is the live site a --site run's sealed lab was made from, as
// the run stores it: where the site is and what it names, so that --resume
// finds the same site again and can tell when it changed. It has no field
// for a secret of the site's configuration (the database's password is
// not kept), and the tuner does not read it.
type SiteRecord struct {
	// Name is the NAME|DIR the site was asked for by (--site).
	Name string `json:"name"`
	// VhostFile is the web server's file that serves it, Server that
	// server ("nginx").
	VhostFile string `json:"vhost_file,omitempty"`
	Server    string `json:"server,omitempty"`
	// DocRoot is its document root; AppRoot the directory the lab showed
	// of it (the docroot, or the directory holding the docroot and the
	// app's configuration).
	DocRoot string `json:"docroot,omitempty"`
	AppRoot string `json:"app_root,omitempty"`
	// Pool is the php-fpm pool it passes PHP to.
	Pool string `json:"pool,omitempty"`
	// DBName, DBHost and DBUser are the database the app's configuration
	// names, its host as written and its account.
	DBName string `json:"db_name,omitempty"`
	DBHost string `json:"db_host,omitempty"`
	DBUser string `json:"db_user,omitempty"`
	// DBFrom and DBDump are where the lab's database came from, as
	// --db-from and --db-dump said ("" and "": auto), so that a resumed
	// run's lab holds the same data.
	DBFrom string `json:"db_from,omitempty"`
	DBDump string `json:"db_dump,omitempty"`
}

// siteRecordFields is SiteRecord's JSON form without its methods.
type siteRecordFields SiteRecord

// UnmarshalJSON reads a record, or the form runs stored before there was
// one: the site's name alone, as a string.
func (r *SiteRecord) UnmarshalJSON(data []byte) error {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '"' {
		*r = SiteRecord{}
		return json.Unmarshal(t, &r.Name)
	}
	return json.Unmarshal(data, (*siteRecordFields)(r))
}
