#!/usr/bin/env python3
"""Say whether and how the connection can be set up (spec 5.10.1 step 1).

Reads one request line on stdin:
  {"type": "discover", "identity_hint": {...}, "settings": {...}}
and prints one line: the auth strategy, provider and setup requirements,
or {"failure": <ConnectionFailure>} when the settings are incomplete.
Makes no network call. Exit status 0 either way.
"""

import argparse

from lib import connection as c
from lib import oauth

URLS = ("authorization_url", "token_url", "api_base")


def main(out):
    req = c.read_request()
    settings = c.load_settings(req.get("settings"))
    cfg = oauth.Config(settings)
    problems = cfg.problems(URLS)
    if problems:
        out.line({"failure": c.not_configured(cfg.service, problems)})
        return
    out.line({
        "auth_strategy": "browser_redirect",
        "provider": cfg.service,
        "identity_match": True,
        "tenant_type": c.setting(settings, "tenant_type", "personal"),
        "initial_permissions": oauth.scope_list(settings.get("scopes")),
        "setup_requirements": {"browser": True, "secure_input": False, "app_registration": False},
    })


if __name__ == "__main__":
    argparse.ArgumentParser(description="Discover how to connect (one JSON request line on stdin).").parse_args()
    c.run_once(main, lambda f: {"failure": f})
