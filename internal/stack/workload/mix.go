package workload

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/traffic/load"
)

// MixShares are the mix workload's shares of requests, in percent. They are
// an assumption, stated so it can be argued with, from how readers reach a
// blog: most arrive on an article from a search engine or a shared link, so
// single posts take half the requests (spread over ten posts with a
// Zipf-like tail: a few posts are much more popular than the rest); the
// front page is the most requested single URL; category archives and
// on-site search are a minority. Comments are far rarer than views on real
// blogs (well under 1% of page views); 2% keeps a few comment writes (and
// the cache invalidation they cause) in every short trial.
var MixShares = struct{ Front, Posts, Archive, Search, Comment int }{30, 50, 10, 8, 2}

// mixPostWeights split MixShares.Posts over the ten most recent posts.
var mixPostWeights = []int{12, 9, 7, 5, 4, 4, 3, 2, 2, 2}

// mixSearch is a word of the seeded lab's posts (install.php's word list),
// so the search page lists results as a real search would.
const mixSearch = "coffee"

// mixWorkload builds the mix for a WordPress lab from its database: the
// URLs of its ten newest posts and its largest category, as WordPress
// links them (pretty permalinks when set, so no request is a redirect).
func mixWorkload(ctx context.Context, l *lab.Lab) (Workload, error) {
	sec, err := l.ReadSecrets()
	if err != nil {
		return Workload{}, err
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.DBPeerUID(), sec.DBUser, sec.DBPassword, sec.DBName)
	if err != nil {
		return Workload{}, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	var structure, catBase string
	_ = db.QueryRowContext(ctx, "SELECT option_value FROM wp_options WHERE option_name='permalink_structure'").Scan(&structure)
	_ = db.QueryRowContext(ctx, "SELECT option_value FROM wp_options WHERE option_name='category_base'").Scan(&catBase)

	rows, err := db.QueryContext(ctx, "SELECT ID, post_name, post_date FROM wp_posts WHERE post_type='post' AND post_status='publish' ORDER BY post_date DESC, ID DESC LIMIT ?", len(mixPostWeights))
	if err != nil {
		return Workload{}, fmt.Errorf("lab %s: reading its posts: %w", l.Name, err)
	}
	var reqs []load.Request
	reqs = append(reqs, load.Request{Weight: MixShares.Front, Method: "GET", Path: "/"})
	var newest int64
	for rows.Next() {
		var id int64
		var slug, dateS string
		if err := rows.Scan(&id, &slug, &dateS); err != nil {
			rows.Close()
			return Workload{}, fmt.Errorf("lab %s: reading its posts: %w", l.Name, err)
		}
		// The connection has no parseTime: DATETIME comes as text.
		date, err := time.Parse("2006-01-02 15:04:05", dateS)
		if err != nil {
			rows.Close()
			return Workload{}, fmt.Errorf("lab %s: post %d's date %q: %w", l.Name, id, dateS, err)
		}
		if newest == 0 {
			newest = id
		}
		reqs = append(reqs, load.Request{Weight: mixPostWeights[len(reqs)-1], Method: "GET", Path: PostPath(structure, id, slug, date)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Workload{}, fmt.Errorf("lab %s: reading its posts: %w", l.Name, err)
	}
	if newest == 0 {
		return Workload{}, fmt.Errorf("lab %s has no published post; try: phptune lab reset %s", l.Name, l.Name)
	}
	var catID int64
	var catSlug string
	err = db.QueryRowContext(ctx, `SELECT t.term_id, t.slug FROM wp_terms t JOIN wp_term_taxonomy tt ON tt.term_id = t.term_id
		WHERE tt.taxonomy='category' AND tt.count > 0 ORDER BY tt.count DESC, t.term_id LIMIT 1`).Scan(&catID, &catSlug)
	switch {
	case err == sql.ErrNoRows:
		// No category with posts: the date archive of the newest post.
	case err != nil:
		return Workload{}, fmt.Errorf("lab %s: reading its categories: %w", l.Name, err)
	default:
		reqs = append(reqs, load.Request{Weight: MixShares.Archive, Method: "GET", Path: CategoryPath(structure, catBase, catID, catSlug)})
	}
	reqs = append(reqs, load.Request{Weight: MixShares.Search, Method: "GET", Path: "/?s=" + mixSearch})
	id, err := commentablePost(ctx, l)
	if err != nil {
		return Workload{}, err
	}
	reqs = append(reqs, commentRequest(id, MixShares.Comment))
	return Workload{Name: Mix, Requests: reqs, Writes: true}, nil
}

// PostPath is the URL path WordPress links a post by under the permalink
// structure (the option permalink_structure): "/?p=ID" for plain
// permalinks or a structure with tags this does not fill (%category%,
// %author%), which WordPress then redirects.
func PostPath(structure string, id int64, slug string, date time.Time) string {
	if structure == "" {
		return fmt.Sprintf("/?p=%d", id)
	}
	r := strings.NewReplacer(
		"%year%", date.Format("2006"), "%monthnum%", date.Format("01"), "%day%", date.Format("02"),
		"%hour%", date.Format("15"), "%minute%", date.Format("04"), "%second%", date.Format("05"),
		"%postname%", slug, "%post_id%", fmt.Sprint(id))
	p := r.Replace(structure)
	if strings.Contains(p, "%") && !strings.Contains(slug, "%") {
		return fmt.Sprintf("/?p=%d", id)
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// CategoryPath is a category archive's URL path: /category/SLUG/ (or the
// site's category base) with pretty permalinks, /?cat=ID without.
func CategoryPath(structure, base string, id int64, slug string) string {
	if structure == "" {
		return fmt.Sprintf("/?cat=%d", id)
	}
	base = strings.Trim(base, "/")
	if base == "" {
		base = "category"
	}
	p := "/" + base + "/" + url.PathEscape(slug)
	if strings.HasSuffix(structure, "/") {
		p += "/"
	}
	return p
}
