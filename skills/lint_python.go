package skills

import (
	"fmt"
	"regexp"
	"strings"
)

// Python patterns. They run on code with comments and triple-quoted
// strings removed (pythonCode), line by line.
var (
	pyShellRules = []struct {
		re  *regexp.Regexp
		msg string
		// onStrings matches against code with string literals kept.
		onStrings bool
	}{
		{regexp.MustCompile(`\bos\.system\s*\(`), "os.system runs a shell command string; call subprocess.run with an argument list instead", false},
		{regexp.MustCompile(`\bos\.popen\s*\(`), "os.popen runs a shell command string; call subprocess.run with an argument list instead", false},
		{regexp.MustCompile(`\bshell\s*=\s*(?:[^F\s]|F[^a]|Fa[^l])`), "shell=True (or any value but False) makes subprocess run a shell command string; pass an argument list with shell=False", false},
		{regexp.MustCompile(`['"]shell['"]\s*:\s*(?:[^F\s]|F[^a])`), "passes shell=True through keyword arguments; pass an argument list with shell=False", true},
		{regexp.MustCompile(`\bsubprocess\.(?:getoutput|getstatusoutput)\s*\(`), "subprocess.getoutput runs a shell command string; call subprocess.run with an argument list instead", false},
		{regexp.MustCompile(`\bcommands\.\w+\s*\(`), "the commands module runs shell command strings; call subprocess.run with an argument list instead", false},
		{regexp.MustCompile(`\bcreate_subprocess_shell\s*\(`), "create_subprocess_shell runs a shell command string; use create_subprocess_exec with an argument list", false},
		{regexp.MustCompile(`['"](?:/usr)?(?:/bin/)?(?:ba|da|z|k)?sh['"]\s*,\s*['"]-c['"]`), "runs a shell with -c and a command string; call the program directly with an argument list", true},
	}
	pyDynamicCodeRE = regexp.MustCompile(`(?:^|[^.\w])(?:eval|exec)\s*\(`)
	// pyEnvLiteralRE finds environment reads with a literal name.
	pyEnvLiteralRE = regexp.MustCompile(`\benvironb?\s*(?:\[\s*|\.(?:get|pop|setdefault)\s*\(\s*)[rbu]?(['"])([^'"\n]*)['"]|\bgetenvb?\s*\(\s*[rbu]?(['"])([^'"\n]*)['"]`)
	// pyEnvAnyRE finds every environment access.
	pyEnvAnyRE   = regexp.MustCompile(`\b(?:environb?|getenvb?|putenv|unsetenv)\b`)
	pyImportRE   = regexp.MustCompile(`^\s*(?:from\s+\S+\s+)?import\s`)
	pyEnvAliasRE = regexp.MustCompile(`\b(?:environb?|getenvb?)\s+as\b`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	sandboxEnvs  = []string{"PATH", "HOME", "TMPDIR", "PWD", "LANG", "LC_ALL", "TZ"}
)

// codeLine is one line of source with what lint rules must ignore removed.
type codeLine struct {
	n int
	// code has comments and triple-quoted strings removed; one-line string
	// literals are kept.
	code string
	// bare is code with the contents of string literals removed too, so a
	// word in a message or a regular expression is not taken for a call.
	bare string
}

// pythonCode returns src's lines with comments and the contents of
// triple-quoted strings removed; one-line string literals are kept, so
// environment names in them stay visible.
func pythonCode(src string) []codeLine {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	out := make([]codeLine, 0, len(lines))
	triple := "" // the open triple quote, or ""
	for i, l := range lines {
		var b, bare strings.Builder
		for j := 0; j < len(l); {
			if triple != "" {
				k := strings.Index(l[j:], triple)
				if k < 0 {
					j = len(l)
					continue
				}
				j += k + 3
				triple = ""
				b.WriteString(`""`)
				bare.WriteString(`""`)
				continue
			}
			c := l[j]
			switch {
			case c == '#':
				j = len(l)
			case strings.HasPrefix(l[j:], `"""`) || strings.HasPrefix(l[j:], `'''`):
				triple = l[j : j+3]
				j += 3
			case c == '"' || c == '\'':
				k := j + 1
				for k < len(l) && l[k] != c {
					if l[k] == '\\' {
						k++
					}
					k++
				}
				if k >= len(l) {
					k = len(l) - 1
				}
				b.WriteString(l[j : k+1])
				bare.WriteByte(c)
				bare.WriteByte(c)
				j = k + 1
			default:
				b.WriteByte(c)
				bare.WriteByte(c)
				j++
			}
		}
		out = append(out, codeLine{n: i + 1, code: b.String(), bare: bare.String()})
	}
	return out
}

// lintPython applies the shell-interpolation and environment rules to one
// Python file.
func lintPython(file, src string, allowedEnv map[string]bool, o Options, r *ValidationReport) {
	envSev := SeverityError
	if o.AllowUndeclaredEnv {
		envSev = SeverityWarning
	}
	for _, cl := range pythonCode(src) {
		for _, rule := range pyShellRules {
			text := cl.bare
			if rule.onStrings {
				text = cl.code
			}
			if rule.re.MatchString(text) {
				r.add(SeverityError, RuleShell, file, cl.n, "", rule.msg)
			}
		}
		if pyDynamicCodeRE.MatchString(cl.bare) {
			r.add(SeverityWarning, RuleShell, file, cl.n, "", "eval/exec runs code built at run time; avoid it, and never pass it script arguments")
		}
		if pyImportRE.MatchString(cl.bare) {
			if pyEnvAliasRE.MatchString(cl.bare) {
				r.add(envSev, RuleUndeclaredEnv, file, cl.n, "",
					"imports the environment under another name, which hides what it reads; use os.environ with literal variable names")
			}
			continue
		}
		literal := pyEnvLiteralRE.FindAllStringSubmatchIndex(cl.code, -1)
		for _, m := range literal {
			name := ""
			if m[4] >= 0 {
				name = cl.code[m[4]:m[5]]
			} else {
				name = cl.code[m[8]:m[9]]
			}
			if !allowedEnv[name] {
				r.add(envSev, RuleUndeclaredEnv, file, cl.n, "",
					fmt.Sprintf("reads environment variable %s, which requirements.env does not declare; declare it (credentials arrive as keystore ref_id variables) or stop reading it", name))
			}
		}
		// Every environment access outside strings must be one of the
		// literal reads above.
		if len(pyEnvAnyRE.FindAllStringIndex(cl.bare, -1)) > len(literal) {
			r.add(envSev, RuleUndeclaredEnv, file, cl.n, "",
				"uses the environment without a literal variable name (or copies or changes it); read only the declared requirements.env variables by name")
		}
	}
}
