#!/usr/bin/env python3
"""After a failed health check: does the service accept the key again?

Arguments (passed as --name=value):
  --error  the failed health check's error text

Prints {"success": true} when the key check answers 200 again, else
{"success": false, "failure": <ConnectionFailure>} (token_revoked: enter
a new key; rate_limited or service_unavailable: wait). Exit status 0.
"""

import argparse

from lib import apikey
from lib import connection as c


def main(out):
    p = argparse.ArgumentParser(description="Try to recover the connection after a failed health check.")
    p.add_argument("--error", default="")
    p.parse_args()
    failure, _, _ = apikey.verify(out, apikey.Config(c.load_settings()))
    out.line({"success": True} if failure is None else {"success": False, "failure": failure})


if __name__ == "__main__":
    c.run_once(main, lambda f: {"success": False, "failure": f})
