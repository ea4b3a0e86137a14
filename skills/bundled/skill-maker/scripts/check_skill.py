#!/usr/bin/env python3
"""Check a staged skill directory against the authoring rules; print JSON.

Arguments (passed as --name=value):
  --path  the skill directory, relative to the work dir

This is a quick pre-check while drafting; Silas's install validation is the
one that decides. Exit status: 0 no problems, 1 problems found, 2 bad input.
"""

import argparse
import json
import sys
from pathlib import Path

from lib.authoring import check_dir


def main():
    p = argparse.ArgumentParser(description="Check a staged skill against the authoring rules.")
    p.add_argument("--path", required=True)
    args = p.parse_args()
    work = Path.cwd().resolve()
    root = (work / args.path).resolve()
    try:
        root.relative_to(work)
    except ValueError:
        print(json.dumps({"ok": False, "error": "path leaves the work dir"}))
        sys.exit(2)
    if not root.is_dir():
        print(json.dumps({"ok": False, "error": "path %r is not a directory" % args.path}))
        sys.exit(2)
    problems, warnings = check_dir(root)
    print(json.dumps({"ok": not problems, "problems": problems, "warnings": warnings}))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
