"""Silas skill authoring rules, shared by skill-maker's scripts (stdlib only).

These checks let a work item fix a draft before it asks for approval. They
are a subset of the install validation Silas runs itself (which decides):
passing here does not install anything.
"""

import hashlib
import json
import re
from pathlib import Path

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
ARG_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DESCRIPTION_MIN, DESCRIPTION_MAX = 24, 1024
ACTIVATIONS = ("auto", "manual", "background")
ARG_TYPES = ("string", "integer", "number", "boolean", "array")
SCHEMA_KEYS = {"type", "description", "required", "default", "example", "enum", "pattern", "min_length",
               "max_length", "minimum", "maximum", "max_items", "items", "format", "allow_leading_dash"}
FRONT_KEYS = ("license", "requirements", "ui", "composes_with", "metadata")
SANDBOX_ENV = {"PATH", "HOME", "TMPDIR", "PWD", "LANG", "LC_ALL", "TZ"}

# Constructs that run shell command strings. The patterns are escaped so this
# file does not contain the constructs themselves.
SHELL_PATTERNS = [
    (re.compile(r"\bos\.(system|popen)\s*\("), "runs a shell command string; use subprocess.run with an argument list"),
    (re.compile(r"\bshell\s*=\s*True\b"), "runs a shell command string; pass an argument list with shell=False"),
    (re.compile(r"\bsubprocess\.(getoutput|getstatusoutput)\s*\("), "runs a shell command string; use subprocess.run with an argument list"),
]
ENV_READ = re.compile(r"\b(?:environ\s*(?:\[\s*|\.get\s*\(\s*)|getenv\s*\(\s*)['\"]([^'\"]+)['\"]")
CREDENTIAL = re.compile(
    r"(?i)\b(password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|token)\b"
    r"['\"]?\s*[:=]\s*['\"]([^'\"\s]{6,})['\"]")
KEY_LIKE = re.compile(r"\b(AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,})")
STEPS = re.compile(r"(?:^|\s)(?:\d{1,2}[.)]\s|step\s+\d+\b)", re.I)
WHEN = re.compile(r"(?i)\b(use (this|it|when|for|to|if)|when(ever)?\b|if the (user|owner|task))")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def check_rel_path(p, top):
    """Problems with a file path of a skill that must sit under top/."""
    if not isinstance(p, str) or not p:
        return "path must be a non-empty string"
    if p.startswith("/") or "\\" in p or ".." in p.split("/") or p.startswith("~"):
        return "%s must be a relative path inside the skill" % p
    if not p.startswith(top + "/") or p.endswith("/"):
        return "%s must be a file under %s/" % (p, top)
    return None


def check_description(desc):
    problems, warnings = [], []
    if not isinstance(desc, str) or len(desc.strip()) < DESCRIPTION_MIN:
        problems.append("description must be at least %d characters: say what the skill does and when to use it" % DESCRIPTION_MIN)
        return problems, warnings
    if len(desc) > DESCRIPTION_MAX:
        problems.append("description is longer than %d characters; keep it to when to use the skill" % DESCRIPTION_MAX)
    if len(STEPS.findall(desc)) > 1 or "`" in desc or "--" in desc:
        problems.append("description reads as a procedure; say when to use the skill and put the steps in the body")
    if not WHEN.search(desc):
        warnings.append('description should say when to use the skill ("Use when ...")')
    return problems, warnings


def lint_python(path, source, allowed_env):
    """Problems of one Python script: syntax, shell strings, env, credentials."""
    problems = []
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        problems.append("%s:%s: syntax error: %s" % (path, e.lineno, e.msg))
        return problems
    for n, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
        for pattern, message in SHELL_PATTERNS:
            if pattern.search(code):
                problems.append("%s:%d: %s" % (path, n, message))
        for name in ENV_READ.findall(code):
            if name not in allowed_env:
                problems.append("%s:%d: reads environment variable %s; declare it in requirements.env" % (path, n, name))
        m = CREDENTIAL.search(line)
        if (m and not re.search(r"(?i)your|example|xxx|changeme|placeholder", m.group(2))) or KEY_LIKE.search(line):
            problems.append("%s:%d: looks like a hardcoded credential; read a keystore ref_id from a declared environment variable instead" % (path, n))
    return problems


def check_schema(script, args):
    problems = []
    if args is None:
        return problems
    if not isinstance(args, dict):
        return ["script_args.%s must map argument names to schemas" % script]
    for name, spec in args.items():
        where = "script_args.%s.%s" % (script, name)
        if not ARG_NAME_RE.match(name):
            problems.append("%s: argument names are lowercase letters, digits and '_'" % where)
        if not isinstance(spec, dict):
            problems.append("%s: schema must be a mapping" % where)
            continue
        unknown = set(spec) - SCHEMA_KEYS
        if unknown:
            problems.append("%s: unknown schema keys %s" % (where, ", ".join(sorted(unknown))))
        if spec.get("type") not in ARG_TYPES:
            problems.append("%s: type must be one of %s" % (where, ", ".join(ARG_TYPES)))
        if spec.get("type") == "array" and not isinstance(spec.get("items"), dict):
            problems.append("%s: an array needs an items schema" % where)
        if spec.get("required") is True and "default" in spec:
            problems.append("%s: an argument with a default is not required" % where)
    return problems


def yaml_value(v):
    """YAML for a front matter value: JSON is valid YAML flow syntax."""
    return json.dumps(v, ensure_ascii=False, sort_keys=False)


def render_skill_md(name, draft):
    lines = ["---", "name: " + name, "description: " + yaml_value(draft["description"].strip())]
    lines.append("activation: " + draft.get("activation", "auto"))
    for key in FRONT_KEYS:
        if draft.get(key):
            lines.append("%s: %s" % (key, yaml_value(draft[key])))
    if draft.get("script_args"):
        lines.append("script_args: " + yaml_value(draft["script_args"]))
    lines.append("---")
    body = draft["body"].rstrip("\n") + "\n"
    return "\n".join(lines) + "\n\n" + body


def check_draft(name, draft):
    """Return (problems, warnings, files) where files maps path -> text."""
    problems, warnings = [], []
    if not NAME_RE.match(name) or len(name) > 64:
        problems.append("name must be lowercase letters and digits joined by single hyphens, at most 64 characters")
    if not isinstance(draft, dict):
        return ["the spec file must hold a JSON object"], warnings, {}
    unknown = set(draft) - {"description", "activation", "body", "scripts", "script_args", "references",
                            "assets", "requirements", "metadata", "ui", "license", "composes_with"}
    if unknown:
        problems.append("unknown draft keys: %s" % ", ".join(sorted(unknown)))
    p, w = check_description(draft.get("description"))
    problems += p
    warnings += w
    if draft.get("activation", "auto") not in ACTIVATIONS:
        problems.append("activation must be one of %s" % ", ".join(ACTIVATIONS))
    if not isinstance(draft.get("body"), str) or not draft["body"].strip():
        problems.append("body (the SKILL.md instructions) is required: when to use the skill, its scripts, its constraints")
    req = draft.get("requirements") or {}
    env = req.get("env", []) if isinstance(req, dict) else []
    if not all(isinstance(e, str) and ENV_NAME_RE.match(e) for e in env):
        problems.append("requirements.env must list environment variable names")
        env = []
    allowed_env = SANDBOX_ENV | set(env)
    files = {}
    for top, key in (("scripts", "scripts"), ("references", "references"), ("assets", "assets")):
        group = draft.get(key) or {}
        if not isinstance(group, dict):
            problems.append("%s must map file paths to their text" % key)
            continue
        for path, text in group.items():
            err = check_rel_path(path, top)
            if err:
                problems.append(err)
                continue
            if not isinstance(text, str):
                problems.append("%s: content must be text" % path)
                continue
            if top == "scripts":
                if not path.endswith(".py"):
                    problems.append("%s: scripts must be Python (.py), standard library preferred" % path)
                    continue
                problems += lint_python(path, text, allowed_env)
            elif KEY_LIKE.search(text):
                problems.append("%s: looks like it holds a credential" % path)
            files[path] = text
    script_args = draft.get("script_args") or {}
    if not isinstance(script_args, dict):
        problems.append("script_args must map script paths to argument schemas")
        script_args = {}
    for script, args in script_args.items():
        if script not in files:
            problems.append("script_args names %s, which the draft does not define" % script)
        problems += check_schema(script, args)
    for path in files:
        if path.startswith("scripts/") and path.count("/") == 1 and path not in script_args:
            warnings.append("%s has no script_args entry; it can only run without arguments" % path)
    if not problems:
        files["SKILL.md"] = render_skill_md(name, draft)
    return problems, warnings, files


def check_dir(root):
    """Authoring problems of a skill directory already on disk."""
    problems, warnings = [], []
    skill_md = root / "SKILL.md"
    if not skill_md.is_file():
        return ["SKILL.md is missing"], warnings
    text = skill_md.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---\n"):
        problems.append("SKILL.md must start with a --- front matter line")
    m = re.search(r"^name:\s*\"?([^\"\n]+?)\"?\s*$", text, re.M)
    if not m:
        problems.append("SKILL.md has no name field")
    elif m.group(1) != root.name:
        problems.append("name %r does not match the directory name %r" % (m.group(1), root.name))
    if not re.search(r"^description:\s*\S", text, re.M):
        problems.append("SKILL.md has no description field")
    env = set(re.findall(r"\b([A-Z][A-Z0-9_]+)\b", "".join(re.findall(r"(?m)^requirements:.*$", text))))
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.is_symlink():
            problems.append("%s is a symlink; skills hold only regular files" % rel)
            continue
        if not f.is_file():
            continue
        top = rel.split("/", 1)[0]
        if "/" in rel and top not in ("scripts", "references", "assets"):
            problems.append("%s: files belong under scripts/, references/ or assets/" % rel)
        if rel.endswith(".py"):
            problems += lint_python(rel, f.read_text(encoding="utf-8", errors="replace"), SANDBOX_ENV | env)
    return problems, warnings
