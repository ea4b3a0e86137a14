package skills

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/silas-ai/silas/runtime/gates/guardrails"
)

// assignRE is guardrails' credential_assignment rule with the quote kept,
// to tell a literal ("password = 'hunter22'") from code
// ("password = args.password").
var assignRE = regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|passphrase|secret|api[_\-]?key|apikey|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token|client[_\-]?secret|private[_\-]?key|token)\b["']?\s*[:=]\s*(["']?)([^\s"',;]{6,})`)

// placeholderWords mark example values in documentation, not secrets.
var placeholderWords = []string{"your", "example", "xxx", "changeme", "change_me", "placeholder", "redacted", "<", "${", "{{", "***", "dummy", "sample", "replace", "..."}

// secretFinding is a credential found on one line.
type secretFinding struct {
	line int
	kind string
}

// findSecrets scans a text file line by line with the guardrails secret
// rules. In code (.py, shell) an assignment counts only when its value is a
// literal; placeholder values are ignored. It never returns the secret.
func findSecrets(file string, data []byte, red *guardrails.SecretRedactor) []secretFinding {
	var out []secretFinding
	ext := path.Ext(file)
	isPy := ext == ".py"
	isSh := isShellScript(file, data)
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	// A PEM block spans lines: find it on the whole text first.
	if strings.Contains(string(data), "PRIVATE KEY") {
		for i, l := range lines {
			if strings.Contains(l, "-----BEGIN") && strings.Contains(l, "PRIVATE KEY") {
				out = append(out, secretFinding{line: i + 1, kind: guardrails.SecretPrivateKey})
			}
		}
	}
	for i, l := range lines {
		_, found := red.Redact(l)
		for _, f := range found {
			if f.Kind == guardrails.SecretPrivateKey {
				continue
			}
			if f.Kind == guardrails.SecretAssignment && !literalAssignment(l, isPy, isSh) {
				continue
			}
			out = append(out, secretFinding{line: i + 1, kind: f.Kind})
		}
	}
	return out
}

// literalAssignment reports whether line assigns a literal, non-placeholder
// value to a credential-like name.
func literalAssignment(line string, isPy, isSh bool) bool {
	for _, m := range assignRE.FindAllStringSubmatch(line, -1) {
		quote, val := m[1], m[2]
		low := strings.ToLower(val)
		if placeholder(low) {
			continue
		}
		switch {
		case isPy && quote == "":
			continue // an expression: a name, a call, an attribute
		case isPy && strings.HasPrefix(val, "{"):
			continue // an f-string field
		case isSh && strings.HasPrefix(val, "$"):
			continue // a parameter expansion
		}
		return true
	}
	return false
}

func placeholder(low string) bool {
	for _, w := range placeholderWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// isText reports whether data looks like text: valid UTF-8 without NUL.
func isText(data []byte) bool {
	s := string(data)
	return !strings.ContainsRune(s, 0) && validUTF8(s)
}

func credentialMessage(kind string) string {
	return fmt.Sprintf("holds a credential literal (%s); remove it and read the credential at run time from the keystore ref_id passed in a declared environment variable", kind)
}
