"""Unified diff parsing shared by the coding skill's scripts (stdlib only).

parse(text) returns a list of FilePatch. It understands plain unified
diffs and git diffs: new and deleted files (/dev/null), renames, binary
markers and the "\\ No newline at end of file" marker.
"""

import re

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(Exception):
    """A diff that cannot be parsed or applied."""


class Hunk:
    def __init__(self, old_start, old_len, new_start, new_len):
        self.old_start = old_start
        self.old_len = old_len
        self.new_start = new_start
        self.new_len = new_len
        # Lines as (kind, text) with kind in " ", "-", "+"; text keeps "\n"
        # unless the line had no newline at end of file.
        self.lines = []

    def old_lines(self):
        return [t for k, t in self.lines if k in (" ", "-")]

    def new_lines(self):
        return [t for k, t in self.lines if k in (" ", "+")]


class FilePatch:
    def __init__(self):
        self.old_path = None
        self.new_path = None
        self.hunks = []
        self.binary = False
        self.rename = False

    @property
    def status(self):
        if self.binary:
            return "binary"
        if self.old_path is None:
            return "added"
        if self.new_path is None:
            return "deleted"
        if self.rename or self.old_path != self.new_path:
            return "renamed"
        return "modified"

    @property
    def path(self):
        return self.new_path if self.new_path is not None else self.old_path

    def counts(self):
        added = sum(1 for h in self.hunks for k, _ in h.lines if k == "+")
        removed = sum(1 for h in self.hunks for k, _ in h.lines if k == "-")
        return added, removed


def _strip(path, strip):
    path = path.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    parts = path.split("/")
    if strip >= len(parts):
        raise PatchError("cannot strip %d leading components from %r" % (strip, path))
    return "/".join(parts[strip:])


def parse(text, strip=1):
    """Parse a unified diff into FilePatch objects."""
    lines = text.splitlines(keepends=True)
    patches = []
    cur = None
    pending = False  # a "diff --git" header waits for its ---/+++ lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            cur = FilePatch()
            patches.append(cur)
            pending = True
            m = re.match(r"^diff --git a/(.*) b/(.*)$", line.rstrip("\n"))
            if m:
                cur.old_path = _strip("a/" + m.group(1), strip)
                cur.new_path = _strip("b/" + m.group(2), strip)
            i += 1
            continue
        if line.startswith("rename from ") and cur is not None:
            cur.old_path = line[len("rename from "):].rstrip("\n")
            cur.rename = True
        elif line.startswith("rename to ") and cur is not None:
            cur.new_path = line[len("rename to "):].rstrip("\n")
            cur.rename = True
        elif line.startswith("new file mode") and cur is not None:
            cur.old_path = None
        elif line.startswith("deleted file mode") and cur is not None:
            cur.new_path = None
        elif line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            if cur is None:
                cur = FilePatch()
                patches.append(cur)
            cur.binary = True
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if cur is None or not pending:
                cur = FilePatch()
                patches.append(cur)
            pending = False
            cur.old_path = _strip(line[4:], strip)
            cur.new_path = _strip(lines[i + 1][4:], strip)
            i += 2
            continue
        elif line.startswith("@@"):
            pending = False
            if cur is None:
                raise PatchError("line %d: hunk without a file header" % (i + 1))
            m = HUNK_RE.match(line)
            if not m:
                raise PatchError("line %d: malformed hunk header %r" % (i + 1, line.rstrip("\n")))
            h = Hunk(int(m.group(1)), int(m.group(2) or "1"), int(m.group(3)), int(m.group(4) or "1"))
            cur.hunks.append(h)
            i += 1
            old_seen = new_seen = 0
            while i < len(lines) and (old_seen < h.old_len or new_seen < h.new_len or lines[i].startswith("\\")):
                body = lines[i]
                if body.startswith("\\"):
                    if h.lines:
                        k, t = h.lines[-1]
                        h.lines[-1] = (k, t.rstrip("\n"))
                    i += 1
                    continue
                kind = body[:1]
                if body in ("\n", ""):
                    kind, body = " ", " \n"
                if kind not in (" ", "-", "+"):
                    raise PatchError("line %d: unexpected line in hunk: %r" % (i + 1, body.rstrip("\n")))
                h.lines.append((kind, body[1:]))
                if kind in (" ", "-"):
                    old_seen += 1
                if kind in (" ", "+"):
                    new_seen += 1
                i += 1
            if old_seen != h.old_len or new_seen != h.new_len:
                raise PatchError("hunk at old line %d is truncated" % h.old_start)
            continue
        i += 1
    return [p for p in patches if p.hunks or p.binary or p.rename or p.old_path is None or p.new_path is None]


def apply_hunks(old_text, hunks):
    """Apply hunks to old_text and return the new text.

    Each hunk must match exactly (context and removed lines); it is looked
    for at its stated line first and then at the nearest offset, as patch(1)
    does without fuzz.
    """
    old = old_text.splitlines(keepends=True)
    out = []
    pos = 0
    offset = 0
    for n, h in enumerate(hunks, 1):
        want = h.old_lines()
        start = max(h.old_start - 1 + offset, 0) if h.old_len else h.old_start + offset
        found = _find(old, want, start, pos)
        if found is None:
            raise PatchError("hunk %d (old line %d) does not match the file" % (n, h.old_start))
        out.extend(old[pos:found])
        out.extend(h.new_lines())
        pos = found + len(want)
        offset = found - (h.old_start - 1 if h.old_len else h.old_start)
    out.extend(old[pos:])
    return "".join(out)


def _find(old, want, start, lo):
    if not want:
        return min(max(start, lo), len(old))
    span = len(old)
    for delta in range(0, span + 1):
        for cand in (start - delta, start + delta):
            if cand < lo or cand + len(want) > len(old):
                continue
            if old[cand:cand + len(want)] == want:
                return cand
    return None
