#!/usr/bin/env python3
"""Connect with the OAuth 2.0 authorization code grant and PKCE.

Speaks setup.py's NDJSON protocol (spec 5.10.1, docs/connections.md):
reads the start event on stdin, listens on a free port of 127.0.0.1 for
the redirect (RFC 8252), emits a browser_redirect setup step with the
authorization URL (PKCE S256, RFC 7636, and a random state), and when the
browser comes back checks the state, exchanges the code with the code
verifier, writes the tokens to the credential file and emits the
completion. A redirect with a wrong state is refused (consent_denied).
A cancel event on stdin ends it at once, leaving nothing behind. Exit
status 0.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import re
import secrets
import threading
import time
import urllib.parse

from lib import connection as c
from lib import oauth

URLS = ("authorization_url", "token_url", "api_base")
PATH_RE = re.compile(r"^/[A-Za-z0-9._~/-]{0,100}$")
# authorization_params may add these, never replace the grant's own.
RESERVED = ("response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "scope")
PAGE = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Silas</title></head>"
        "<body style=\"font-family:sans-serif;margin:3em\"><p>%s</p></body></html>")


class Callback(http.server.BaseHTTPRequestHandler):
    """Takes the one redirect of this setup; everything else is refused."""

    server_version = "silas-connection"
    sys_version = ""

    def do_GET(self):  # noqa: N802 - http.server's name
        srv = self.server
        u = urllib.parse.urlsplit(self.path)
        if u.path != srv.callback_path:
            self.page(404, "Not found.")
            return
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        with srv.lock:
            if srv.answered:
                self.page(409, "This setup already has its answer. You can close this window.")
                return
            state_ok = hmac.compare_digest(q.get("state", "").encode("utf-8"), srv.state.encode("utf-8"))
            code, error = q.get("code", ""), q.get("error", "")
            if state_ok and not code and not error:
                self.page(400, "The answer carries no authorization code.")
                return
            srv.answered = True
        if not state_ok:
            self.page(400, "This answer does not belong to the pending Silas setup, so it was refused. Start the connection again from Silas.")
        elif error:
            self.page(200, "The authorization was not given. You can close this window.")
        else:
            self.page(200, "Silas received the authorization. You can close this window and go back to Silas.")
        srv.events.put({"type": "_callback", "state_ok": state_ok, "code": code, "error": error})

    def page(self, status, text):
        body = (PAGE % text).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        # The query holds the authorization code: never log requests.
        pass


def pkce_pair():
    verifier = secrets.token_urlsafe(64)[:96]
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def auth_params(settings):
    """Extra authorization request parameters from the
    authorization_params setting (text values only)."""
    extra = settings.get("authorization_params")
    if not isinstance(extra, dict):
        return {}
    return {k: v for k, v in extra.items() if isinstance(k, str) and isinstance(v, str) and k not in RESERVED}


def main(session):
    start = session.start()
    if start is None:
        session.fail(c.failure("unknown", "the service", "The setup got no start event."))
    settings = c.load_settings(start.get("settings"))
    cfg = oauth.Config(settings)
    svc = cfg.service
    problems = cfg.problems(URLS)
    callback_path = c.setting(settings, "redirect_path", "/callback")
    if not PATH_RE.match(callback_path):
        problems.append("redirect_path must be a plain path starting with /")
    if not c.credential_path():
        problems.append("SILAS_SECRETS_DIR and SILAS_CREDENTIAL_REF are not set")
    if problems:
        session.fail(c.not_configured(svc, problems))
    session.cleanups.append(c.remove_credential)
    scopes = oauth.requested_scopes(settings, start)
    timeout = c.int_setting(settings, "redirect_timeout_seconds", 600, 10, 3600)

    state = secrets.token_urlsafe(32)
    verifier, challenge = pkce_pair()
    session.out.protect(verifier)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Callback)
    server.daemon_threads = True
    server.callback_path = callback_path
    server.state = state
    server.events = session.events
    server.lock = threading.Lock()
    server.answered = False
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    redirect_uri = "http://127.0.0.1:%d%s" % (port, callback_path)

    params = auth_params(settings)
    params.update({
        "response_type": "code",
        "client_id": cfg.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    })
    if scopes:
        params["scope"] = " ".join(scopes)
    base = cfg.urls["authorization_url"]
    auth_url = base + ("&" if "?" in base else "?") + urllib.parse.urlencode(params)
    session.step("s1", {"type": "browser_redirect", "auth_url": auth_url, "listening_on": "127.0.0.1:%d" % port})

    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        ev = session.next(timeout=left) if left > 0 else None
        if ev is None:
            session.fail(c.failure("unknown", svc, "No answer came back from the browser within %d minutes. Retry to start again." % max(1, timeout // 60)))
        if ev.get("type") != "_callback":
            continue
        if not ev["state_ok"]:
            session.fail(c.failure("consent_denied", svc, "The answer from the browser did not carry this setup's state, so it was refused; %s was not connected." % svc))
        if ev["error"]:
            err = ev["error"] if oauth.ERROR_CODE_RE.match(ev["error"]) else "unknown_error"
            session.fail(oauth.error_failure(cfg, c.Response(400, None, b""), {"error": err}, "the authorization"))
        session.out.protect(ev["code"])
        break
    server.shutdown()

    try:
        resp, data = oauth.token_request(cfg, {
            "grant_type": "authorization_code",
            "code": ev["code"],
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        })
    except c.ServiceError as e:
        session.fail(c.failure("service_unavailable", svc, "%s." % e))
    if resp.status != 200 or not isinstance(data.get("access_token"), str):
        session.fail(oauth.error_failure(cfg, resp, data, "the code exchange"))
    oauth.finish_setup(session, cfg, data, scopes)


if __name__ == "__main__":
    argparse.ArgumentParser(description="Run the browser redirect setup (NDJSON on stdin and stdout).").parse_args()
    c.run_setup(main)
