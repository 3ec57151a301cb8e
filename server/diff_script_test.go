package server

// The differential script format (testdata/diff/*.txt) and its parser.
//
// One command per line, split shell-like: whitespace separates arguments,
// "double quotes" allow \n \r \t \" \\ and \xHH escapes, 'single quotes'
// are literal, and an unquoted # starts a comment. A line whose first word
// is one of the directives below is not sent to the servers:
//
//	proto 2|3            run the script only in this protocol (default: both;
//	                     RESP3 connections send HELLO 3 first, uncompared)
//	norm RULE ...        apply normalisation RULEs to every later reply
//	                     (see diffNormRules); auto-ID mapping is always on
//	expect-diff REASON   the next command is a deliberate difference: both
//	                     replies are logged, they must differ
//	streamd-reply TEXT   with expect-diff: streamd's reply, rendered as
//	                     Value.String does, must equal TEXT
//	streamd-reply-resp2 TEXT, streamd-reply-resp3 TEXT
//	                     the same for one protocol only
//	conn NAME            switch to connection NAME (opened on first use)
//	async CMD ...        send CMD on the current connection, read later
//	await                read and compare the current connection's async reply
//	wait-blocked N       poll INFO until blocked_clients is N on both servers
//	sleep MS             let MS milliseconds pass (for idle / min-idle cases,
//	                     never to wait for state)
//	raw "BYTES"          send BYTES as is (inline commands, protocol errors)
//	                     and compare the reply
//	pushes               compare (and clear) the RESP3 pushes received so far
//	                     on the current connection
//	repeat N CMD ...     run CMD N times, {i} in it replaced by 1..N
//
// In the arguments of commands, {pad:N} stands for N bytes "x" (after
// repeat's {i}, so {pad:{i}00} grows with i): large values without
// writing them out.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// diffStep is one executable line of a script.
type diffStep struct {
	Line         int
	Op           string    // "cmd", "conn", "async", "await", "wait-blocked", "sleep", "raw", "pushes"
	Args         []string  // the command, or the directive's arguments
	Norms        []string  // normalisation rules active for this step
	ExpectDiff   string    // non-empty: a deliberate difference, with its reason
	StreamdReply [4]string // with ExpectDiff: streamd's exact rendered reply by protocol (index 2, 3), if given
}

// diffScript is a parsed script file.
type diffScript struct {
	Name   string
	Protos []int // protocols to run in
	Steps  []diffStep
}

// loadDiffScript reads and parses one script file.
func loadDiffScript(path, name string) (*diffScript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseDiffScript(name, string(data))
}

// parseDiffScript parses a script's text.
func parseDiffScript(name, text string) (*diffScript, error) {
	s := &diffScript{Name: name, Protos: []int{2, 3}}
	var norms []string
	var expectDiff string
	var streamdReply [4]string
	for i, raw := range strings.Split(text, "\n") {
		lineNo := i + 1
		words, err := splitDiffLine(raw)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, lineNo, err)
		}
		if len(words) == 0 {
			continue
		}
		rest := words[1:]
		switch words[0] {
		case "proto":
			if len(rest) != 1 || (rest[0] != "2" && rest[0] != "3") {
				return nil, fmt.Errorf("%s:%d: proto takes 2 or 3", name, lineNo)
			}
			p, _ := strconv.Atoi(rest[0])
			s.Protos = []int{p}
			continue
		case "norm":
			for _, r := range rest {
				if _, ok := diffNormRules[r]; !ok {
					return nil, fmt.Errorf("%s:%d: unknown norm rule %q", name, lineNo, r)
				}
			}
			norms = append(append([]string(nil), norms...), rest...)
			continue
		case "expect-diff":
			if len(rest) == 0 {
				return nil, fmt.Errorf("%s:%d: expect-diff needs a reason", name, lineNo)
			}
			expectDiff = strings.Join(rest, " ")
			continue
		case "streamd-reply":
			streamdReply[2] = strings.Join(rest, " ")
			streamdReply[3] = streamdReply[2]
			continue
		case "streamd-reply-resp2":
			streamdReply[2] = strings.Join(rest, " ")
			continue
		case "streamd-reply-resp3":
			streamdReply[3] = strings.Join(rest, " ")
			continue
		case "repeat":
			n, err := strconv.Atoi(firstOr(rest, ""))
			if err != nil || n < 1 || len(rest) < 2 || expectDiff != "" {
				return nil, fmt.Errorf("%s:%d: repeat N CMD ...", name, lineNo)
			}
			for i := 1; i <= n; i++ {
				args := make([]string, len(rest)-1)
				for j, a := range rest[1:] {
					args[j] = strings.ReplaceAll(a, "{i}", strconv.Itoa(i))
				}
				s.Steps = append(s.Steps, diffStep{Line: lineNo, Op: "cmd", Args: args, Norms: norms})
			}
			continue
		}
		st := diffStep{Line: lineNo, Args: rest, Norms: norms}
		switch words[0] {
		case "conn", "wait-blocked", "sleep", "raw":
			if len(rest) != 1 {
				return nil, fmt.Errorf("%s:%d: %s takes one argument", name, lineNo, words[0])
			}
			st.Op = words[0]
		case "await", "pushes":
			st.Op = words[0]
		case "async":
			if len(rest) == 0 {
				return nil, fmt.Errorf("%s:%d: async needs a command", name, lineNo)
			}
			st.Op = "async"
		default:
			st.Op, st.Args = "cmd", words
		}
		if st.Op == "cmd" || st.Op == "raw" || st.Op == "await" {
			st.ExpectDiff, st.StreamdReply = expectDiff, streamdReply
			expectDiff, streamdReply = "", [4]string{}
		} else if expectDiff != "" {
			return nil, fmt.Errorf("%s:%d: expect-diff must precede a command", name, lineNo)
		}
		if st.StreamdReply != [4]string{} && st.ExpectDiff == "" {
			return nil, fmt.Errorf("%s:%d: streamd-reply needs expect-diff", name, lineNo)
		}
		s.Steps = append(s.Steps, st)
	}
	for i := range s.Steps {
		if s.Steps[i].Op != "cmd" && s.Steps[i].Op != "async" {
			continue
		}
		for j, a := range s.Steps[i].Args {
			b, err := expandPad(a)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, s.Steps[i].Line, err)
			}
			s.Steps[i].Args[j] = b
		}
	}
	return s, nil
}

// expandPad replaces each {pad:N} in a with N bytes "x".
func expandPad(a string) (string, error) {
	for {
		i := strings.Index(a, "{pad:")
		if i < 0 {
			return a, nil
		}
		j := strings.IndexByte(a[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated {pad:N} in %q", a)
		}
		n, err := strconv.Atoi(a[i+5 : i+j])
		if err != nil || n < 0 || n > 1<<20 {
			return "", fmt.Errorf("bad {pad:N} in %q", a)
		}
		a = a[:i] + strings.Repeat("x", n) + a[i+j+1:]
	}
}

// firstOr returns ws[0], or def when ws is empty.
func firstOr(ws []string, def string) string {
	if len(ws) == 0 {
		return def
	}
	return ws[0]
}

// splitDiffLine splits one line shell-like (see the file comment).
func splitDiffLine(line string) ([]string, error) {
	var words []string
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		if i >= len(line) || line[i] == '#' {
			return words, nil
		}
		var w strings.Builder
		for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' {
			switch c := line[i]; c {
			case '\'':
				j := strings.IndexByte(line[i+1:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("unterminated single quote")
				}
				w.WriteString(line[i+1 : i+1+j])
				i += j + 2
			case '"':
				i++
				closed := false
				for i < len(line) {
					c := line[i]
					if c == '"' {
						closed = true
						i++
						break
					}
					if c == '\\' && i+1 < len(line) {
						i++
						switch e := line[i]; e {
						case 'n':
							w.WriteByte('\n')
						case 'r':
							w.WriteByte('\r')
						case 't':
							w.WriteByte('\t')
						case 'x':
							if i+2 >= len(line) {
								return nil, fmt.Errorf("short \\x escape")
							}
							b, err := strconv.ParseUint(line[i+1:i+3], 16, 8)
							if err != nil {
								return nil, fmt.Errorf("bad \\x escape")
							}
							w.WriteByte(byte(b))
							i += 2
						default:
							w.WriteByte(e)
						}
						i++
						continue
					}
					w.WriteByte(c)
					i++
				}
				if !closed {
					return nil, fmt.Errorf("unterminated double quote")
				}
			default:
				w.WriteByte(c)
				i++
			}
		}
		words = append(words, w.String())
	}
}
