#!/usr/bin/env python3
"""Summarize a unified diff (from a file, inline, or git) as JSON.

Arguments (passed as --name=value):
  --diff_file  path of a file holding the diff, relative to the work dir
  --diff       the diff itself
  --git_ref    summarize `git diff <git_ref>` of the repository at --path
  --path       repository directory for git_ref (default ".")

Give exactly one of diff_file, diff and git_ref. Exit status: 0 summary
printed, 2 bad input or git failure.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from lib.unidiff import PatchError, parse

MAX_DIFF_BYTES = 16 << 20


def fail(message, code=2):
    print(json.dumps({"ok": False, "error": message}))
    sys.exit(code)


def within(work, rel, what):
    p = (work / rel).resolve()
    try:
        p.relative_to(work)
    except ValueError:
        fail("%s %r leaves the work dir" % (what, rel))
    return p


def git_diff(repo, ref):
    if ref.startswith("-"):
        fail("git_ref must not start with '-'")
    try:
        proc = subprocess.run(["git", "-C", str(repo), "diff", "--no-color", "--no-ext-diff", ref, "--"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except FileNotFoundError:
        fail("git is not installed in the sandbox")
    if proc.returncode != 0:
        fail("git diff failed: %s" % proc.stderr.decode("utf-8", errors="replace").strip()[:500])
    return proc.stdout.decode("utf-8", errors="replace")


def main():
    p = argparse.ArgumentParser(description="Summarize a unified diff.")
    p.add_argument("--diff_file")
    p.add_argument("--diff")
    p.add_argument("--git_ref")
    p.add_argument("--path", default=".")
    args = p.parse_args()

    given = [x for x in (args.diff_file, args.diff, args.git_ref) if x is not None]
    if len(given) != 1:
        fail("give exactly one of diff_file, diff and git_ref")
    work = Path.cwd().resolve()
    if args.diff is not None:
        text = args.diff
    elif args.diff_file is not None:
        f = within(work, args.diff_file, "diff_file")
        if not f.is_file():
            fail("diff_file %r does not exist" % args.diff_file)
        if f.stat().st_size > MAX_DIFF_BYTES:
            fail("diff_file is larger than %d bytes" % MAX_DIFF_BYTES)
        text = f.read_text(encoding="utf-8", errors="replace")
    else:
        text = git_diff(within(work, args.path, "path"), args.git_ref)

    try:
        patches = parse(text, 1)
    except PatchError as e:
        fail("the diff cannot be read: %s" % e)
    files = []
    total_add = total_del = 0
    for fp in patches:
        added, removed = fp.counts()
        total_add += added
        total_del += removed
        entry = {"path": fp.path, "status": fp.status, "added": added, "removed": removed, "hunks": len(fp.hunks)}
        if fp.status == "renamed":
            entry["old_path"] = fp.old_path
        files.append(entry)
    files.sort(key=lambda e: (-(e["added"] + e["removed"]), e["path"]))
    summary = "%d file%s changed, %d insertion%s(+), %d deletion%s(-)" % (
        len(files), "" if len(files) == 1 else "s", total_add, "" if total_add == 1 else "s",
        total_del, "" if total_del == 1 else "s")
    print(json.dumps({"ok": True, "summary": summary, "files_changed": len(files),
                      "insertions": total_add, "deletions": total_del, "files": files}))


if __name__ == "__main__":
    main()
