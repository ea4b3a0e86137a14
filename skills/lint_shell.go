package skills

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Shell assignments: names a script sets itself are not environment input.
var shAssignRE = regexp.MustCompile(`(?m)(?:^\s*|[;&|({]\s*|\b(?:export|local|declare|readonly|typeset)\s+(?:-\w+\s+)*)([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=|\bread\s+(?:-\w+\s+(?:\S+\s+)?)*([A-Za-z_][A-Za-z0-9_ ]*)|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bgetopts\s+\S+\s+([A-Za-z_][A-Za-z0-9_]*)`)

var (
	shebangShellRE = regexp.MustCompile(`^#!\s*\S*/(?:env\s+)?(?:ba|da|z|k)?sh\b`)
	shDashCRE      = regexp.MustCompile(`\b(?:ba|da|z|k)?sh\s+-c\s+["']?[^'"]*\$`)
)

// shellSpecial are parameters that are not environment variables.
var shellSpecial = map[string]bool{"OPTARG": true, "OPTIND": true, "IFS": true, "RANDOM": true, "LINENO": true,
	"SECONDS": true, "BASH_SOURCE": true, "BASH_VERSION": true, "PIPESTATUS": true, "FUNCNAME": true, "REPLY": true, "UID": true, "EUID": true, "PPID": true}

// isShellScript reports whether a file is a shell script by extension or
// shebang.
func isShellScript(p string, data []byte) bool {
	switch path.Ext(p) {
	case ".sh", ".bash", ".zsh", ".ksh":
		return true
	case "":
		first, _, _ := strings.Cut(string(data), "\n")
		return shebangShellRE.MatchString(first)
	}
	return false
}

// lintShell flags unquoted positional parameters (argument values split
// and globbed by the shell, or run as code), eval and sh -c with
// expansions, and environment variables the skill does not declare.
func lintShell(file, src string, allowedEnv map[string]bool, o Options, r *ValidationReport) {
	envSev := SeverityError
	if o.AllowUndeclaredEnv {
		envSev = SeverityWarning
	}
	assigned := map[string]bool{}
	for _, m := range shAssignRE.FindAllStringSubmatch(src, -1) {
		for _, g := range m[1:] {
			for _, name := range strings.Fields(g) {
				assigned[name] = true
			}
		}
	}
	reported := map[string]bool{}
	for i, line := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n") {
		n := i + 1
		// Quote state restarts on every line: a stray quote (in a heredoc,
		// say) must not hide the rest of the script from the checks, at the
		// price of flagging expansions inside multi-line strings.
		inDouble, inSingle := false, false
		trim := strings.TrimSpace(line)
		if (strings.HasPrefix(trim, "eval ") || strings.Contains(line, " eval ")) && strings.Contains(line, "$") {
			r.add(SeverityError, RuleShell, file, n, "", "eval runs text built from variables as shell code; call the command directly")
		}
		if shDashCRE.MatchString(line) {
			r.add(SeverityError, RuleShell, file, n, "", "sh -c runs a command string built from variables; call the command directly with quoted arguments")
		}
		for j := 0; j < len(line); j++ {
			c := line[j]
			switch {
			case inSingle:
				if c == '\'' {
					inSingle = false
				}
				continue
			case c == '\\':
				j++
				continue
			case c == '\'' && !inDouble:
				inSingle = true
				continue
			case c == '"':
				inDouble = !inDouble
				continue
			case c == '#' && !inDouble && (j == 0 || line[j-1] == ' ' || line[j-1] == '\t'):
				j = len(line)
				continue
			case c != '$' || j+1 >= len(line):
				continue
			}
			name, width := shellParam(line[j+1:])
			if name == "" {
				continue
			}
			j += width
			positional := name == "@" || name == "*" || (name[0] >= '1' && name[0] <= '9')
			switch {
			case positional && !inDouble:
				r.add(SeverityError, RuleShell, file, n, "",
					fmt.Sprintf("argument $%s is used unquoted, so the shell splits and globs it; write \"$%s\"", name, name))
			case !positional && isEnvStyle(name) && !assigned[name] && !allowedEnv[name] && !shellSpecial[name] && !reported[name]:
				reported[name] = true
				r.add(envSev, RuleUndeclaredEnv, file, n, "",
					fmt.Sprintf("reads environment variable %s, which requirements.env does not declare; declare it or stop reading it", name))
			}
		}
	}
}

// shellParam parses the parameter after a '$': "1", "@", "NAME", "{NAME:-x}".
// It returns the parameter's name and how many bytes it spans.
func shellParam(s string) (string, int) {
	if s == "" {
		return "", 0
	}
	if s[0] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", 0
		}
		inner := strings.TrimPrefix(s[1:end], "#")
		k := 0
		for k < len(inner) && (isNameByte(inner[k]) || (k == 0 && (inner[k] == '@' || inner[k] == '*'))) {
			k++
			if inner[0] == '@' || inner[0] == '*' {
				break
			}
		}
		return inner[:k], end + 1
	}
	c := s[0]
	switch {
	case c >= '0' && c <= '9', c == '@', c == '*':
		return string(c), 1
	case isNameByte(c) && !(c >= '0' && c <= '9'):
		k := 1
		for k < len(s) && isNameByte(s[k]) {
			k++
		}
		return s[:k], k
	}
	return "", 0
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isEnvStyle reports an upper-case name, the convention for environment
// variables; lower-case names are taken as the script's own.
func isEnvStyle(name string) bool {
	hasUpper := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			hasUpper = true
		}
	}
	return hasUpper
}
