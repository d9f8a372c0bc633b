// Command rally is a command-line agent for LLM sessions whose turns survive
// provider failures. Everything lives in internal/app/cli; main only hands over.
package main

import (
	"os"

	"github.com/rally-agent/rally/internal/app/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
