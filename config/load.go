package config

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"streamd/server/resp"
)

// ErrVersion is Load's answer to -v/--version: print the version and exit.
var ErrVersion = errors.New("version requested")

// Load builds the configuration from a command line and an environment:
// defaults, then the optional config file (args' first argument when it
// is not a flag), then the STREAMD_<NAME> variables lookupEnv finds, then
// the flags given. Every directive is a flag of the same name, parsed by
// Config.Set as a file line is, so all three accept the same values; a
// Redis directive streamd does not use is accepted (file or flag) with a
// warning in Config.Warnings. dir is made absolute (relative to the working
// directory, as Redis's chdir makes it), and the result is checked with
// CheckCluster. -h/--help returns flag.ErrHelp, -v/--version ErrVersion; a
// mistyped flag's error names the nearest directive.
func Load(args []string, lookupEnv func(string) (string, bool)) (Config, error) {
	cfg := Default()
	fs := flag.NewFlagSet("streamd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	given := map[string]*string{}
	for _, p := range directives {
		given[p.name] = new(string)
		fs.Var(directiveFlag{given[p.name], p.yesNo}, p.name, p.help)
	}
	// Redis's command line takes every directive as a flag: so does this
	// one, for the Redis directives streamd ignores (Config.Set warns, or
	// refuses the refused ones).
	for _, n := range redisDirectives {
		if given[n] == nil {
			given[n] = new(string)
			fs.Var(directiveFlag{v: given[n]}, n, "")
		}
	}
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.BoolVar(showVersion, "v", false, "print the version and exit")
	// Go's flag package stops at the first positional argument; allow the
	// config file first, as "streamd redis.conf --port 7000".
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(joinYesNo(args)); err != nil {
		return cfg, flagError(err)
	}
	if *showVersion {
		return cfg, ErrVersion
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q (the config file comes first); see streamd --help", fs.Arg(0))
	}
	if file != "" {
		if err := LoadFile(file, &cfg); err != nil {
			return cfg, err
		}
		cfg.ConfigFile = file
		if abs, err := filepath.Abs(file); err == nil {
			cfg.ConfigFile = abs
		}
	}
	if err := LoadEnv(&cfg, lookupEnv); err != nil {
		return cfg, err
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && given[f.Name] != nil {
			err = cfg.Set(f.Name, *given[f.Name])
		}
	})
	if err != nil {
		return cfg, err
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return cfg, fmt.Errorf("dir: %v", err)
	}
	if err := cfg.CheckCluster(); err != nil {
		return cfg, err
	}
	if err := cfg.CheckACL(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// flagError rewrites the flag package's errors in streamd's words: an
// unknown flag names the nearest directive and points to --help.
func flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		hint := didYouMean(Suggest(name, false), "--", "")
		if hint == "" && editDistance(name, "version") <= 2 {
			hint = " (did you mean --version?)"
		}
		return fmt.Errorf("unknown flag --%s%s; see streamd --help", name, hint)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("flag --%s needs a value; see streamd --help", strings.TrimLeft(name, "-"))
	}
	return err
}

// ErrACLFileAndUsers is Redis's refusal of "user" lines together with an
// aclfile.
var ErrACLFileAndUsers = errors.New("Configuring Redis with users defined in redis.conf and at the same " +
	"setting an ACL file path is invalid. This setup is very likely to lead to configuration errors " +
	"and security holes, please define either an ACL file or declare users directly in your " +
	"redis.conf, but not both.")

// CheckACL refuses "user" lines together with an aclfile, as Redis does.
func (c *Config) CheckACL() error {
	if c.ACLFile != "" && c.Users != "" {
		return ErrACLFileAndUsers
	}
	return nil
}

// UserLines returns the "user" lines: per line the user's name and rules.
func (c *Config) UserLines() [][]string {
	var out [][]string
	for _, line := range strings.Split(c.Users, "\n") {
		args, ok := resp.SplitArgs([]byte(line))
		if !ok || len(args) == 0 {
			continue
		}
		u := make([]string, len(args))
		for i, a := range args {
			u[i] = string(a)
		}
		out = append(out, u)
	}
	return out
}

// directiveFlag is the flag of one directive: it keeps the value given
// (the last one, if repeated) for Config.Set. A yes/no directive's flag may
// stand alone (--bootstrap = yes) or take yes/no (joinYesNo turns
// "--bootstrap no" into "--bootstrap=no").
type directiveFlag struct {
	v     *string
	yesNo bool
}

// String returns the value given (flag.Value).
func (f directiveFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

// Set keeps s, as yes or no for a yes/no directive (flag.Value).
func (f directiveFlag) Set(s string) error {
	if f.yesNo {
		switch strings.ToLower(s) {
		case "true", "yes", "1":
			s = "yes"
		case "false", "no", "0":
			s = "no"
		default:
			return fmt.Errorf("want yes or no, not %q", s)
		}
	}
	*f.v = s
	return nil
}

// IsBoolFlag lets a yes/no directive's flag stand alone.
func (f directiveFlag) IsBoolFlag() bool { return f.yesNo }

// joinYesNo rewrites "--flag yes" / "--flag no" for the yes/no flags into
// "--flag=yes", Redis's command-line style, which Go's flag package would
// otherwise read as a bare flag followed by a stray argument.
func joinYesNo(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if strings.HasPrefix(a, "-") && !strings.Contains(name, "=") && i+1 < len(args) {
			if p := Lookup(name); p != nil && p.name == name && p.yesNo {
				if next := strings.ToLower(args[i+1]); next == "yes" || next == "no" {
					a = a + "=" + next
					i++
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// LoadFile reads a redis.conf-style file into cfg: one "name value"
// directive a line, "#" comments, arguments split like Redis's sdssplitargs
// (double quotes with \n \xHH escapes, single quotes). As in Redis, an
// unknown directive or a bad value is an error naming the line.
func LoadFile(path string, cfg *Config) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := resp.SplitArgs([]byte(line))
		if !ok {
			return fmt.Errorf("%s:%d: %q: unbalanced quotes in configuration line", path, lineNo, line)
		}
		if len(args) == 0 {
			continue
		}
		name := strings.ToLower(string(args[0]))
		if name == "user" {
			// "user <name> [rule ...]" may repeat: one ACL user each
			// (checked by the server's ACL engine at start-up).
			if len(args) < 2 {
				return fmt.Errorf("%s:%d: %q: Bad directive or wrong number of arguments", path, lineNo, line)
			}
			var b []byte
			for i, a := range args[1:] {
				if i > 0 {
					b = append(b, ' ')
				}
				b = resp.AppendRepr(b, a)
			}
			cfg.Users += string(b) + "\n"
			continue
		}
		p := Lookup(name)
		if p == nil {
			warning, err := ignoredRedisDirective(name)
			switch {
			case errors.Is(err, errUnknown):
				return fmt.Errorf("%s:%d: %q: Bad directive or wrong number of arguments%s",
					path, lineNo, line, didYouMean(Suggest(name, true), "'", "'"))
			case err != nil:
				return fmt.Errorf("%s:%d: %q: %v", path, lineNo, line, err)
			}
			cfg.warnOnce(name, fmt.Sprintf("%s:%d: %s", path, lineNo, warning))
			continue
		}
		vals := make([]string, len(args)-1)
		for i, a := range args[1:] {
			vals[i] = string(a)
		}
		// "bind" takes several addresses; "save" may be given as
		// `save ""` or several "seconds changes" pairs;
		// "latency-tracking-info-percentiles" several numbers; the rest take one.
		var value string
		switch {
		case name == "bind" || name == "save" || name == "latency-tracking-info-percentiles":
			value = strings.Join(vals, " ")
		case len(vals) == 1:
			value = vals[0]
		default:
			return fmt.Errorf("%s:%d: %q: Bad directive or wrong number of arguments", path, lineNo, line)
		}
		before := len(cfg.Warnings)
		if err := cfg.setOrWarn(p, value); err != nil {
			return fmt.Errorf("%s:%d: %q: %v", path, lineNo, line, err)
		}
		for i := before; i < len(cfg.Warnings); i++ {
			cfg.Warnings[i] = fmt.Sprintf("%s:%d: %s", path, lineNo, cfg.Warnings[i])
		}
	}
	return sc.Err()
}

// flag's, CONFIG GET's), the default as text, what it changes, and whether
// it is a yes/no directive whose flag may stand alone.
type Doc struct {
	Name, Default, Help string
	YesNo               bool
	// Group is the section of --help and of the README's table: one of
	// Groups.
	Group string
}

// Docs describes every directive, sorted by name: the one table
// --help prints and the README's Configuration table mirrors.
func Docs() []Doc {
	def := Default()
	out := make([]Doc, len(directives))
	for i, p := range directives {
		d := p.defText
		if d == "" {
			d = p.get(&def)
		}
		if d == "" {
			d = `""`
		}
		out[i] = Doc{Name: p.name, Default: d, Help: p.help, YesNo: p.yesNo, Group: groupOf(p.name)}
	}
	return out
}

// EnvName is the environment variable that sets directive name:
// STREAMD_ and the name in upper case with "-" as "_" (STREAMD_METRICS_ADDR).
func EnvName(name string) string {
	return "STREAMD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// LoadEnv sets every directive whose environment variable (EnvName) lookup
// finds, as a config file line would; an empty value counts (it clears
// metrics-addr, for one). A bad value is an error naming the variable.
func LoadEnv(cfg *Config, lookup func(string) (string, bool)) error {
	for _, p := range directives {
		env := EnvName(p.name)
		v, ok := lookup(env)
		if !ok {
			continue
		}
		if err := cfg.setOrWarn(p, v); err != nil {
			return fmt.Errorf("%s=%q: %v", env, v, err)
		}
	}
	return nil
}

// warnOnce adds warning unless a warning for the Redis directive name was
// already given (a file may repeat a directive: client-output-buffer-limit).
func (c *Config) warnOnce(name, warning string) {
	tag := "'" + name + "'"
	for _, w := range c.Warnings {
		if strings.Contains(w, "Redis directive "+tag) {
			return
		}
	}
	c.Warnings = append(c.Warnings, warning)
}

// didYouMean is " (did you mean <pre>name<post>?)" for a suggestion, or "".
func didYouMean(name, pre, post string) string {
	if name == "" {
		return ""
	}
	return " (did you mean " + pre + name + post + "?)"
}
