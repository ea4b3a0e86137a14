#!/usr/bin/env python3
"""Renew the access token with the stored refresh token (RFC 6749 6).

Rewrites the credential file, then prints one line:
  {"success": true, "new_expires_at": "...", "refresh_token_expires_at": ...}
or {"success": false, "failure": <ConnectionFailure>} (token_revoked when
the service no longer accepts the refresh token). A token that never
expires needs no refresh and succeeds unchanged. Exit status 0.
"""

import argparse

from lib import connection as c
from lib import oauth


def main(out):
    out.line(oauth.refresh(out, oauth.Config(c.load_settings())))


if __name__ == "__main__":
    argparse.ArgumentParser(description="Refresh the connection's access token.").parse_args()
    c.run_once(main, lambda f: {"success": False, "failure": f})
