#!/usr/bin/env python3
"""Run a project's tests and print the result as one JSON object.

Arguments (passed as --name=value):
  --path             project directory, relative to the work dir (default ".")
  --marker           select tests: go -run, pytest -k, unittest -k ("" = all)
  --framework        auto, go, pytest or unittest (default auto)
  --timeout_seconds  wall-clock limit for the test run (default 600)

Exit status: 0 tests passed, 1 tests failed, timed out or none ran, 2 bad
input.
"""

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import time
from pathlib import Path

TAIL_CHARS = 8000


def fail(message, code=2):
    print(json.dumps({"ok": False, "error": message}))
    sys.exit(code)


def inside(base, target):
    try:
        target.relative_to(base)
        return True
    except ValueError:
        return False


def has_pytest_config(root):
    if (root / "pytest.ini").exists() or (root / "conftest.py").exists():
        return True
    for name, marker in (("pyproject.toml", "[tool.pytest"), ("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]")):
        f = root / name
        if f.is_file() and marker in f.read_text(errors="replace"):
            return True
    return False


def detect(root):
    if (root / "go.mod").is_file():
        return "go"
    py_tests = any(root.rglob("test_*.py")) or any(root.rglob("*_test.py"))
    if has_pytest_config(root) or py_tests:
        if importlib.util.find_spec("pytest") is not None:
            return "pytest"
        return "unittest"
    return None


def command(framework, marker):
    if framework == "go":
        cmd = ["go", "test", "./..."]
        return cmd + (["-run", marker] if marker else [])
    if framework == "pytest":
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        return cmd + (["-k", marker] if marker else [])
    cmd = [sys.executable, "-B", "-m", "unittest", "discover", "-v"]
    return cmd + (["-k", marker] if marker else [])


def counts(framework, output):
    """Best-effort pass/fail counts from the runner's summary lines."""
    c = {}
    if framework == "go":
        c["packages_ok"] = len(re.findall(r"^ok\s", output, re.M))
        c["packages_failed"] = len(re.findall(r"^FAIL\s", output, re.M))
        c["tests_failed"] = len(re.findall(r"^\s*--- FAIL:", output, re.M))
    elif framework == "pytest":
        for n, what in re.findall(r"(\d+) (passed|failed|errors?|skipped)", output):
            c[what] = c.get(what, 0) + int(n)
    else:
        m = re.search(r"^Ran (\d+) tests?", output, re.M)
        if m:
            c["ran"] = int(m.group(1))
        m = re.search(r"failures=(\d+)", output)
        c["failures"] = int(m.group(1)) if m else 0
        m = re.search(r"errors=(\d+)", output)
        c["errors"] = int(m.group(1)) if m else 0
    return c


def main():
    p = argparse.ArgumentParser(description="Run a project's tests and report JSON.")
    p.add_argument("--path", default=".")
    p.add_argument("--marker", default="")
    p.add_argument("--framework", default="auto", choices=["auto", "go", "pytest", "unittest"])
    p.add_argument("--timeout_seconds", type=int, default=600)
    args = p.parse_args()

    work = Path.cwd().resolve()
    root = (work / args.path).resolve()
    if not inside(work, root):
        fail("path %r leaves the work dir" % args.path)
    if not root.is_dir():
        fail("path %r is not a directory" % args.path)
    if args.timeout_seconds < 1:
        fail("timeout_seconds must be at least 1")
    if args.marker.startswith("-"):
        fail("marker must not start with '-'")

    framework = args.framework if args.framework != "auto" else detect(root)
    if framework is None:
        fail("no tests found: expected go.mod, pytest configuration or test_*.py files under %r" % args.path)

    cmd = command(framework, args.marker)
    started = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.run(cmd, cwd=str(root), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=args.timeout_seconds)
        output = proc.stdout.decode("utf-8", errors="replace")
        code = proc.returncode
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode("utf-8", errors="replace")
        code = None
        timed_out = True
    except FileNotFoundError:
        fail("%s is not installed in the sandbox" % cmd[0])

    found = counts(framework, output)
    ran_nothing = (framework == "unittest" and found.get("ran", 0) == 0) or \
        (framework == "go" and found.get("packages_ok", 0) == 0 and found.get("packages_failed", 0) == 0)
    # Zero tests is never a pass: a verification must not succeed vacuously.
    passed = code == 0 and not timed_out and not ran_nothing
    print(json.dumps({
        "ok": True,
        "framework": framework,
        "command": cmd[1:] if cmd[0] == sys.executable else cmd,
        "exit_code": code,
        "passed": passed,
        "timed_out": timed_out,
        "duration_seconds": round(time.monotonic() - started, 3),
        "counts": found,
        "ran_nothing": ran_nothing,
        "output_tail": output[-TAIL_CHARS:],
    }))
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
