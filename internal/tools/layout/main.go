package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	write := flag.String("w", "", "rewrite the Layout section of this Markdown `file` instead of printing it")
	flag.Parse()
	if err := run(*write); err != nil {
		fmt.Fprintln(os.Stderr, "layout:", err)
		os.Exit(1)
	}
}

// run prints the Layout section of the module in the working directory, or
// rewrites it in the file named by write.
func run(write string) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("no go.mod here: run it from the repository's root (go run ./internal/tools/layout)")
	}
	pkgs, err := ReadPackages(".")
	if err != nil {
		return err
	}
	section := RenderGroups(pkgs)
	if write == "" {
		_, err := fmt.Print(section)
		return err
	}
	old, err := os.ReadFile(write)
	if err != nil {
		return err
	}
	doc, err := Splice(string(old), section)
	if err != nil {
		return fmt.Errorf("%s: %w", write, err)
	}
	return os.WriteFile(write, []byte(doc), 0o644)
}
