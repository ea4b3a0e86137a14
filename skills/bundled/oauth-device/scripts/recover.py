#!/usr/bin/env python3
"""After a failed health check: does the service accept the token again?

Arguments (passed as --name=value):
  --error  the failed health check's error text

Prints {"success": true} when the service answers again, else
{"success": false, "failure": <ConnectionFailure>} saying what the owner
must do (token_revoked: reconnect; rate_limited or service_unavailable:
wait). It never changes the credential. Exit status 0.
"""

import argparse

from lib import connection as c
from lib import oauth


def main(out):
    p = argparse.ArgumentParser(description="Try to recover the connection after a failed health check.")
    p.add_argument("--error", default="")
    args = p.parse_args()
    out.line(oauth.recover(out, oauth.Config(c.load_settings()), args.error))


if __name__ == "__main__":
    c.run_once(main, lambda f: {"success": False, "failure": f})
