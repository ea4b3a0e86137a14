#!/usr/bin/env python3
"""Connect with the OAuth 2.0 device authorization grant (RFC 8628).

Speaks setup.py's NDJSON protocol (spec 5.10.1, docs/connections.md):
reads the start event on stdin, asks the device authorization endpoint
for a code, emits it as a device_code setup step, polls the token
endpoint at the interval the service asks for (slowing down when told
to), and on approval writes the tokens to the credential file and emits
the completion. A cancel event on stdin ends it at once, leaving nothing
behind. Exit status 0.
"""

import argparse
import time

from lib import connection as c
from lib import oauth

URLS = ("device_authorization_url", "token_url", "api_base")
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def bounded(v, default, lo, hi):
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    if isinstance(v, bool) or not isinstance(v, int):
        return default
    return max(lo, min(hi, v))


def main(session):
    start = session.start()
    if start is None:
        session.fail(c.failure("unknown", "the service", "The setup got no start event."))
    settings = c.load_settings(start.get("settings"))
    cfg = oauth.Config(settings)
    svc = cfg.service
    problems = cfg.problems(URLS)
    if not c.credential_path():
        problems.append("SILAS_SECRETS_DIR and SILAS_CREDENTIAL_REF are not set")
    if problems:
        session.fail(c.not_configured(svc, problems))
    session.cleanups.append(c.remove_credential)
    scopes = oauth.requested_scopes(settings, start)

    form = {"scope": " ".join(scopes)} if scopes else {}
    try:
        resp, data = oauth.post(cfg, cfg.urls["device_authorization_url"], form)
    except c.ServiceError as e:
        session.fail(c.failure("service_unavailable", svc, "%s." % e))
    device_code = data.get("device_code")
    user_code = data.get("user_code")
    verification = data.get("verification_uri") or data.get("verification_url")
    if resp.status != 200 or not all(isinstance(v, str) and v for v in (device_code, user_code, verification)):
        session.fail(oauth.error_failure(cfg, resp, data, "the device authorization request"))
    session.out.protect(device_code)
    if c.check_url(verification):
        session.fail(c.failure("unknown", svc, "%s gave a verification address that is not https; it was not shown." % svc))
    expires_in = bounded(data.get("expires_in"), 900, 1, 3600)
    interval = bounded(data.get("interval"), 5, 1, 60)
    session.step("s1", {
        "type": "device_code",
        "verification_url": verification,
        "user_code": user_code[:64],
        "expires_in": expires_in,
        "poll_interval": interval,
    })

    deadline = time.monotonic() + expires_in
    expired = c.failure("unknown", svc, "The code expired before it was entered. Retry to get a new code.")
    while True:
        session.sleep(interval)
        if time.monotonic() >= deadline:
            session.fail(expired)
        try:
            resp, data = oauth.token_request(cfg, {"grant_type": GRANT, "device_code": device_code})
        except c.ServiceError as e:
            session.log("warning", "polling failed, retrying: %s" % e)
            continue
        if resp.status == 200 and isinstance(data.get("access_token"), str):
            oauth.finish_setup(session, cfg, data, scopes)
        err = data.get("error")
        if err == "authorization_pending":
            continue
        if err == "slow_down" or resp.status == 429:
            interval = bounded(data.get("interval"), interval + 5, interval + 1, 120)
            continue
        if resp.status >= 500:
            session.log("warning", "%s answered HTTP %d while polling, retrying" % (svc, resp.status))
            continue
        if err == "expired_token":
            session.fail(expired)
        session.fail(oauth.error_failure(cfg, resp, data, "the authorization"))


if __name__ == "__main__":
    argparse.ArgumentParser(description="Run the device code setup (NDJSON on stdin and stdout).").parse_args()
    c.run_setup(main)
