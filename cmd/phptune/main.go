// Command phptune measures and tunes PHP web stacks (nginx/Apache + php-fpm +
// MariaDB) with its own load generator and observer. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/phptune/phptune/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
