package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/lab"
)

func init() { register(newDemoCmd) }

// newDemoCmd is the README's main command. Until the tuner lands it brings
// up the embedded WordPress lab, fetches its front page, reports what it saw
// and takes the lab down again.
func newDemoCmd(env *Env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Bring up the embedded WordPress lab, fetch its front page, take it down",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			start := time.Now()
			say := func(s string) { fmt.Fprintln(env.Stderr, "demo:", s) }
			l, err := lab.Up(env.Ctx, lab.Options{Name: name, App: "wordpress", Progress: say})
			if err != nil {
				return err
			}
			defer func() {
				if derr := lab.Down(l.Name); derr != nil {
					fmt.Fprintln(env.Stderr, "demo: taking the lab down:", derr)
				} else {
					say("lab " + l.Name + " is down; nothing is left running")
				}
			}()
			upTime := time.Since(start)
			printLab(env, l)
			fmt.Fprintf(env.Stdout, "up in:      %.1fs\n\n", upTime.Seconds())
			return fetchFront(env.Ctx, env.Stdout, l.URL+"/", 5)
		},
	}
	cmd.Flags().StringVar(&name, "name", "demo", "name of the demo's lab")
	return cmd
}

var titleRE = regexp.MustCompile(`(?s)<title>(.*?)</title>`)

// fetchFront GETs url n times and prints the status, title, size and the
// time of each fetch: the first one warms the opcode cache.
func fetchFront(ctx context.Context, w io.Writer, url string, n int) error {
	client := &http.Client{Timeout: 30 * time.Second}
	for i := 0; i < n; i++ {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		title := ""
		if m := titleRE.FindSubmatch(body); m != nil {
			title = strings.TrimSpace(string(m[1]))
		}
		fmt.Fprintf(w, "GET %s  %d  %6d bytes  %6.1f ms  posts on page: %d  title: %q\n",
			url, resp.StatusCode, len(body), float64(d.Microseconds())/1000, strings.Count(string(body), `<h2 class="wp-block-post-title"`), title)
		if resp.StatusCode != 200 {
			return fmt.Errorf("front page answered %d", resp.StatusCode)
		}
	}
	return nil
}
