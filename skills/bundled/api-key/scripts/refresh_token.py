#!/usr/bin/env python3
"""An API key does not expire or refresh: report success, change nothing.

Prints {"success": true, "new_expires_at": null,
"refresh_token_expires_at": null}. Exit status 0.
"""

import argparse

from lib import connection as c


def main(out):
    out.line({"success": True, "new_expires_at": None, "refresh_token_expires_at": None})


if __name__ == "__main__":
    argparse.ArgumentParser(description="Refresh the connection (nothing to do for an API key).").parse_args()
    c.run_once(main, lambda f: {"success": False, "failure": f})
