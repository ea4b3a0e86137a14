#!/usr/bin/env python3
"""Test the connection with a real API call.

Arguments (passed as --name=value):
  --capability  what to test; "key" runs the key check (check_path)

Prints {"ok": true, "summary": "...", "account": ..., "latency_ms": ...}
or {"ok": false, "failure": <ConnectionFailure>}. Exit status 0.
"""

import argparse

from lib import apikey
from lib import connection as c


def main(out):
    p = argparse.ArgumentParser(description="Probe a capability of the connection.")
    p.add_argument("--capability", default="key")
    args = p.parse_args()
    cfg = apikey.Config(c.load_settings())
    if args.capability != "key":
        out.line({"ok": False, "failure": c.failure("unknown", cfg.service, "Unknown capability %r; this connection can probe: key." % args.capability[:40])})
        return
    failure, account, latency = apikey.verify(out, cfg)
    if failure:
        out.line({"ok": False, "failure": failure})
        return
    summary = ("%s accepts the key (account %s)" % (cfg.service, account)) if account else ("%s accepts the key" % cfg.service)
    out.line({"ok": True, "summary": summary, "account": account, "latency_ms": latency})


if __name__ == "__main__":
    c.run_once(main, lambda f: {"ok": False, "failure": f})
