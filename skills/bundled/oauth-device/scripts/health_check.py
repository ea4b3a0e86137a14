#!/usr/bin/env python3
"""Check that the stored token still works, with one API call.

Prints one HealthCheckResult line (spec 3.12):
  {"healthy": ..., "token_expires_at": ..., "refresh_token_expires_at": ...,
   "latency_ms": ..., "error": ..., "warnings": [...]}
error starts with a code: not_configured, token_expired (refresh it),
unauthorized, rate_limited, service_unavailable or unknown. Exit status 0.
"""

import argparse

from lib import connection as c
from lib import oauth


def main(out):
    out.line(oauth.health(out, oauth.Config(c.load_settings())))


def on_error(f):
    return {"healthy": False, "token_expires_at": None, "refresh_token_expires_at": None,
            "latency_ms": 0, "error": "unknown: " + f["message"], "warnings": []}


if __name__ == "__main__":
    argparse.ArgumentParser(description="Check the connection's health.").parse_args()
    c.run_once(main, on_error)
