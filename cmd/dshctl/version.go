package main

import (
	"fmt"

	"github.com/dshctl/dshctl/internal/buildinfo"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

func newVersionCmd(e *env, g *globals) *cobra.Command {
	var out *output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show dshctl's version, commit and Go version",
		Long:  help("version"),
		Example: `  dshctl version
  dshctl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return printVersion(e, out.format) },
	}
	out = addOutput(cmd, e, textFormats...)
	return cmd
}

// printVersion prints what `dshctl version` and `dshctl --version` show,
// in the -o format.
func printVersion(e *env, format string) error {
	b := buildinfo.Read()
	if format != termui.FormatText {
		return e.out(format).WriteJSON(e.stdout, b)
	}
	_, err := fmt.Fprintln(e.stdout, b)
	return err
}
