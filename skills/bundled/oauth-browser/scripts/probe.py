#!/usr/bin/env python3
"""Test one capability of the connection with a real API call.

Arguments (passed as --name=value):
  --capability  what to test; "user" reads the signed-in account

Prints {"ok": true, "summary": "...", "account": ..., "latency_ms": ...}
or {"ok": false, "failure": <ConnectionFailure>}. Exit status 0.
"""

import argparse

from lib import connection as c
from lib import oauth


def main(out):
    p = argparse.ArgumentParser(description="Probe a capability of the connection.")
    p.add_argument("--capability", default="user")
    args = p.parse_args()
    out.line(oauth.probe(out, oauth.Config(c.load_settings()), args.capability))


if __name__ == "__main__":
    c.run_once(main, lambda f: {"ok": False, "failure": f})
