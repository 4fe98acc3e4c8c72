package main

import (
	"fmt"
	"io"

	"github.com/dshctl/dshctl/internal/buildinfo"

	"github.com/spf13/cobra"
)

var versionFormats = []string{formatText, formatJSON, formatJSONL}

func newVersionCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show dshctl's version, commit and Go version",
		Long: `Show dshctl's version, the commit it was built from and the Go toolchain
that built it, from the information Go records in the binary. dshctl
--version prints the same line.`,
		Example: `  dshctl version
  dshctl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := g.outputFormat(formatText, versionFormats...)
			if err != nil {
				return err
			}
			b := buildinfo.Read()
			if format != formatText {
				return e.out(format).WriteJSON(e.stdout, b)
			}
			_, err = fmt.Fprintln(e.stdout, b)
			return err
		},
	}
	setFormats(cmd, versionFormats...)
	return cmd
}

// printVersion is what --version prints.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, buildinfo.Read())
	return err
}
