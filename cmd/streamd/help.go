package main

import (
	"fmt"
	"io"
	"strings"

	"streamd/config"
	"streamd/internal/version"
)

// helpWidth is the column --help's lines fit in.
const helpWidth = 100

// helpIntro is --help's text before the settings (wrapped to helpWidth).
const helpIntro = `streamd is a Redis-protocol server for Redis Streams, durable through a Raft log. ` +
	`Each setting below is a config file directive (redis.conf syntax: an existing redis.conf loads, ` +
	`with one warning per Redis directive streamd does not use), a flag --name value (or --name=value; ` +
	`a yes/no flag alone means yes) and an environment variable STREAMD_NAME (upper case, "-" as "_", ` +
	`e.g. STREAMD_METRICS_ADDR). A flag wins over the environment, which wins over the file, which wins ` +
	`over the default. CONFIG GET answers these names.`

// helpExamples end --help: a comment line and a command line each.
var helpExamples = [][2]string{
	{"A single node on port 7000 from an existing redis.conf, its data in /var/lib/streamd:",
		"streamd /etc/redis/redis.conf --port 7000 --dir /var/lib/streamd"},
	{"The first node of a cluster (the others: their own --node-id, --raft-addr, --port and --dir,\n" +
		"and --join 127.0.0.1:7001 instead of --bootstrap; see the README's Cluster section):",
		`streamd --port 7001 --dir d1 --node-id n1 --raft-addr 127.0.0.1:17001 --bootstrap`},
}

// writeHelp prints the usage and every directive (name, default, what it
// changes) from config.Docs, the table the README mirrors, grouped by
// config.Groups and wrapped to helpWidth columns, then two examples.
func writeHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Usage: streamd [config-file] [--name value ...]\n")
	b.WriteString("       streamd --version | --help\n\n")
	wrap(&b, helpIntro, "", helpWidth)
	docs := config.Docs()
	for _, g := range config.Groups {
		fmt.Fprintf(&b, "\n%s:\n", strings.ToUpper(g[:1])+g[1:])
		for _, d := range docs {
			if d.Group != g {
				continue
			}
			fmt.Fprintf(&b, "  --%s (default %s)\n", d.Name, d.Default)
			wrap(&b, d.Help, "      ", helpWidth)
		}
	}
	b.WriteString("\nExamples:\n")
	for _, ex := range helpExamples {
		for _, l := range strings.Split(ex[0], "\n") {
			b.WriteString("  # " + l + "\n")
		}
		b.WriteString("  " + ex[1] + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap writes text's words as lines of at most width columns, each
// starting with indent (a word longer than a line gets a line of its own).
func wrap(b *strings.Builder, text, indent string, width int) {
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
}

// versionLine is what --version prints.
func versionLine() string { return version.Get().String() }
