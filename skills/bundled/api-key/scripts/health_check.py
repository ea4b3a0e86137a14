#!/usr/bin/env python3
"""Check that the stored API key still works, with one call to check_path.

Prints one HealthCheckResult line (spec 3.12):
  {"healthy": ..., "token_expires_at": null, "refresh_token_expires_at": null,
   "latency_ms": ..., "error": ..., "warnings": []}
error starts with a code: not_configured, unauthorized, rate_limited,
service_unavailable or unknown. Exit status 0.
"""

import argparse

from lib import apikey
from lib import connection as c


def main(out):
    out.line(apikey.health(out, apikey.Config(c.load_settings())))


def on_error(f):
    return {"healthy": False, "token_expires_at": None, "refresh_token_expires_at": None,
            "latency_ms": 0, "error": "unknown: " + f["message"], "warnings": []}


if __name__ == "__main__":
    argparse.ArgumentParser(description="Check the connection's health.").parse_args()
    c.run_once(main, on_error)
