#!/usr/bin/env python3
"""Apply a unified diff to files under the work dir and print JSON.

Arguments (passed as --name=value):
  --patch_file  path of a file holding the diff, relative to the work dir
  --patch       the diff itself (give exactly one of patch_file and patch)
  --path        directory the diff's paths are relative to (default ".")
  --strip       leading path components to remove, as patch -p (default 1)
  --check       "true" to only check that the diff applies (default false)

Every hunk must match exactly (at its line or the nearest offset). Nothing
is written unless every hunk of every file applies. Paths must stay inside
the work dir. Exit status: 0 applied (or applies), 1 does not apply, 2 bad
input.
"""

import argparse
import json
import sys
from pathlib import Path

from lib.unidiff import PatchError, apply_hunks, parse

MAX_PATCH_BYTES = 4 << 20


def parse_bool(v):
    if v in ("true", "false"):
        return v == "true"
    raise argparse.ArgumentTypeError("expected true or false")


def fail(message, code=2):
    print(json.dumps({"ok": False, "applied": False, "error": message}))
    sys.exit(code)


def target(work, root, rel):
    if rel is None:
        return None
    if rel.startswith("/") or ".." in rel.split("/"):
        raise PatchError("path %r leaves the work dir" % rel)
    t = root / rel
    resolved = t.resolve()
    try:
        resolved.relative_to(work)
    except ValueError:
        raise PatchError("path %r leaves the work dir" % rel)
    return t


def main():
    p = argparse.ArgumentParser(description="Apply a unified diff inside the work dir.")
    p.add_argument("--patch_file")
    p.add_argument("--patch")
    p.add_argument("--path", default=".")
    p.add_argument("--strip", type=int, default=1)
    p.add_argument("--check", type=parse_bool, default=False)
    args = p.parse_args()

    work = Path.cwd().resolve()
    root = (work / args.path).resolve()
    try:
        root.relative_to(work)
    except ValueError:
        fail("path %r leaves the work dir" % args.path)
    if (args.patch is None) == (args.patch_file is None):
        fail("give exactly one of patch_file and patch")
    if args.patch is not None:
        text = args.patch
    else:
        pf = (work / args.patch_file).resolve()
        try:
            pf.relative_to(work)
        except ValueError:
            fail("patch_file %r leaves the work dir" % args.patch_file)
        if not pf.is_file():
            fail("patch_file %r does not exist" % args.patch_file)
        if pf.stat().st_size > MAX_PATCH_BYTES:
            fail("patch_file is larger than %d bytes" % MAX_PATCH_BYTES)
        text = pf.read_text(encoding="utf-8")

    try:
        patches = parse(text, args.strip)
        if not patches:
            raise PatchError("the diff holds no file changes")
        planned = []  # (path, new text or None to delete, old path to delete or None)
        report = []
        seen = set()
        for fp in patches:
            for p in (fp.old_path, fp.new_path):
                if p is not None and p in seen:
                    raise PatchError("%s: the diff changes this file twice; merge its hunks into one file section" % p)
            seen.update(p for p in (fp.old_path, fp.new_path) if p is not None)
            if fp.binary:
                raise PatchError("%s: binary diffs are not supported" % fp.path)
            old_t = target(work, root, fp.old_path)
            new_t = target(work, root, fp.new_path)
            if old_t is not None and not old_t.is_file():
                raise PatchError("%s: file does not exist" % fp.old_path)
            if new_t is not None and new_t.exists() and (old_t is None or fp.status == "renamed"):
                raise PatchError("%s: file already exists" % fp.new_path)
            old_text = old_t.read_text(encoding="utf-8") if old_t is not None else ""
            new_text = apply_hunks(old_text, fp.hunks)
            if new_t is None and new_text != "":
                raise PatchError("%s: deleting the file would drop content the diff does not show" % fp.old_path)
            added, removed = fp.counts()
            planned.append((new_t, None if new_t is None else new_text, old_t if (new_t is None or fp.status == "renamed") else None))
            report.append({"path": fp.path, "old_path": fp.old_path, "status": fp.status,
                           "hunks": len(fp.hunks), "added": added, "removed": removed})
    except PatchError as e:
        print(json.dumps({"ok": True, "applied": False, "check": args.check, "error": str(e)}))
        sys.exit(1)
    except UnicodeDecodeError as e:
        fail("a file is not UTF-8 text: %s" % e)

    if not args.check:
        for new_t, new_text, old_t in planned:
            if new_t is not None:
                new_t.parent.mkdir(parents=True, exist_ok=True)
                new_t.write_text(new_text, encoding="utf-8")
            if old_t is not None:
                old_t.unlink()
    print(json.dumps({"ok": True, "applied": not args.check, "check": args.check, "files": report}))


if __name__ == "__main__":
    main()
