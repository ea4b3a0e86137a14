#!/usr/bin/env python3
"""Write a new skill under a staging directory from a JSON draft.

Arguments (passed as --name=value):
  --name        the skill's name (also its directory name)
  --spec_file   JSON draft in the work dir: description, body, scripts,
                script_args, references, assets, requirements, metadata,
                ui, license, activation (see references/authoring-guidelines.md)
                The skill lands in staging/<name> under the work dir, where
                Silas looks for it when the work item passes verification.
  --overwrite   "true" to replace an earlier draft of the same name

Nothing is installed: Silas validates the staged skill and the owner must
approve it (skill_install). Exit status: 0 written, 1 the draft breaks the
authoring rules (nothing written), 2 bad input.
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

from lib.authoring import check_draft, sha256

MAX_SPEC_BYTES = 2 << 20
# STAGING is fixed: Silas proposes every skill under it for installation.
STAGING = "staging"


def parse_bool(v):
    if v in ("true", "false"):
        return v == "true"
    raise argparse.ArgumentTypeError("expected true or false")


def fail(message, code=2):
    print(json.dumps({"ok": False, "error": message}))
    sys.exit(code)


def within(base, p, what):
    r = p.resolve()
    try:
        r.relative_to(base)
    except ValueError:
        fail("%s leaves the work dir" % what)
    return r


def main():
    p = argparse.ArgumentParser(description="Write a new skill from a JSON draft.")
    p.add_argument("--name", required=True)
    p.add_argument("--spec_file", required=True)
    p.add_argument("--overwrite", type=parse_bool, default=False)
    args = p.parse_args()

    work = Path.cwd().resolve()
    spec = within(work, work / args.spec_file, "spec_file")
    if not spec.is_file():
        fail("spec_file %r does not exist" % args.spec_file)
    if spec.stat().st_size > MAX_SPEC_BYTES:
        fail("spec_file is larger than %d bytes" % MAX_SPEC_BYTES)
    try:
        draft = json.loads(spec.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        fail("spec_file is not JSON: %s" % e)

    problems, warnings, files = check_draft(args.name, draft)
    if problems:
        print(json.dumps({"ok": False, "written": False, "problems": problems, "warnings": warnings}))
        sys.exit(1)

    staging = within(work, work / STAGING, "the staging directory")
    dest = within(work, staging / args.name, "the skill directory")
    if dest.exists():
        if not args.overwrite:
            fail("%s already exists; pass overwrite=true to replace the draft" % dest.relative_to(work))
        if dest.is_symlink() or not dest.is_dir():
            fail("%s is not a directory" % dest.relative_to(work))
        shutil.rmtree(dest)
    written = []
    for rel in sorted(files):
        target = within(work, dest / rel, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = files[rel].encode("utf-8")
        target.write_bytes(data)
        written.append({"path": rel, "sha256": sha256(data), "size": len(data)})
    print(json.dumps({"ok": True, "written": True, "dir": dest.relative_to(work).as_posix(),
                      "files": written, "warnings": warnings,
                      "next": "finish the work item: when it passes verification Silas validates the staged skill and asks the owner to approve it (skill_install)"}))


if __name__ == "__main__":
    main()
