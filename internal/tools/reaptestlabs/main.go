// Command reaptestlabs takes down the labs that killed tests left running
// and removes their homes. make test runs it first: a test binary that
// times out panics without running its cleanups, and its labs' nginx,
// php-fpm and MariaDB would keep their CPU, memory and ports through
// every later run on the machine. A home whose test process still runs
// (another make test at the same time) is left alone.
//
//	go run ./internal/tools/reaptestlabs
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/lab/labtest/testhome"
)

func main() {
	if err := reap(labtest.TempParent(), time.Now(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "reaptestlabs:", err)
		os.Exit(1)
	}
}

// reap takes down the labs of every abandoned test home under parent and
// removes the home, saying what it did on w.
func reap(parent string, now time.Time, w io.Writer) error {
	homes, err := filepath.Glob(filepath.Join(parent, testhome.Prefix+"*"))
	if err != nil {
		return err
	}
	var failed int
	for _, home := range homes {
		fi, err := os.Lstat(home)
		if err != nil || !fi.IsDir() {
			continue
		}
		gone, why, err := testhome.Abandoned(home, now)
		if err != nil {
			fmt.Fprintf(w, "reaptestlabs: %s left alone: %v\n", home, err)
			continue
		}
		if !gone {
			continue
		}
		if err := downAll(home); err != nil {
			fmt.Fprintf(w, "reaptestlabs: %s (%s): %v\n", home, why, err)
			failed++
			continue
		}
		if err := os.RemoveAll(home); err != nil {
			return err
		}
		fmt.Fprintf(w, "reaptestlabs: removed %s and its labs (%s)\n", home, why)
	}
	if failed > 0 {
		return fmt.Errorf("%d abandoned test homes could not be taken down (above)", failed)
	}
	return nil
}

// downAll takes down every lab in the phptune home dir.
func downAll(dir string) error {
	old, had := os.LookupEnv("PHPTUNE_HOME")
	os.Setenv("PHPTUNE_HOME", dir)
	defer func() {
		if had {
			os.Setenv("PHPTUNE_HOME", old)
		} else {
			os.Unsetenv("PHPTUNE_HOME")
		}
	}()
	hs, err := lab.List()
	if err != nil {
		return err
	}
	for _, h := range hs {
		// A dead lab is cleaned as List finds it ("cleaned: …"): gone
		// already, as is one that went between List and Down.
		if err := lab.Down(h.Lab.Name); err != nil && !errors.Is(err, lab.ErrNoLab) {
			return fmt.Errorf("lab down %s: %w", h.Lab.Name, err)
		}
	}
	return nil
}
