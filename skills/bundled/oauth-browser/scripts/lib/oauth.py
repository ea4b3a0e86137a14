"""OAuth 2.0 helpers shared by the bundled OAuth connection skills: the
settings, the token endpoint, the credential file's JSON, and the health,
refresh, recover, probe and API scripts, which are the same whatever grant
obtained the tokens.

This file is the same in oauth-device and oauth-browser (a test checks
that the copies do not drift apart).
"""

import json
import re
import time

from lib import connection as c

# RFC 6749 3.3: a scope token is printable ASCII without space, " or \.
SCOPE_RE = re.compile(r'^[\x21\x23-\x5B\x5D-\x7E]{1,200}$')
ERROR_CODE_RE = re.compile(r"^[a-z0-9_]{1,64}$")
SCHEME_RE = re.compile(r"^[A-Za-z]{1,20}$")
CLIENT_ID_RE = re.compile(r"^[\x21-\x7E]{1,256}$")
# Warn when a token expires sooner than this (the runtime refreshes ahead).
EXPIRY_WARNING_SECONDS = 600
# Microsoft Entra ID error codes found in error_description.
ADMIN_BLOCK_CODES = ("AADSTS65001", "AADSTS90094", "AADSTS90095", "AADSTS50105", "AADSTS53003")
MFA_CODES = ("AADSTS50076", "AADSTS50079", "AADSTS50158")


class Config:
    """The settings of an OAuth connection, checked."""

    def __init__(self, settings):
        self.settings = settings
        self.service = c.service_name(settings)
        self.client_id = c.setting(settings, "client_id")
        self.user_path = c.setting(settings, "user_path", "/user")
        self.login_field = c.setting(settings, "login_field", "login")
        self.auth_scheme = c.setting(settings, "auth_scheme", "Bearer")
        self.urls = {}

    def problems(self, url_keys):
        """What keeps the connection from running: missing or unusable
        settings. The URLs that pass land in self.urls."""
        self.urls, problems = c.url_settings(self.settings, url_keys)
        if not CLIENT_ID_RE.match(self.client_id):
            problems.append("client_id is not set")
        if not SCHEME_RE.match(self.auth_scheme):
            problems.append("auth_scheme must be one word such as Bearer")
        if not self.user_path.startswith("/"):
            problems.append("user_path must start with /")
        return problems


def scope_list(v):
    """Scopes from a list or a space- or comma-separated text, keeping
    only well-formed scope tokens."""
    if isinstance(v, str):
        items = re.split(r"[\s,]+", v)
    elif isinstance(v, list):
        items = [x for x in v if isinstance(x, str)]
    else:
        items = []
    out = []
    for x in items:
        x = x.strip()
        if x and SCOPE_RE.match(x) and x not in out:
            out.append(x)
    return out


def requested_scopes(settings, start):
    """The scopes to ask for: the settings' scopes (else the start event's
    initial_permissions) plus the start event's incremental_scopes."""
    base = scope_list(settings.get("scopes")) or scope_list(start.get("initial_permissions"))
    for s in scope_list(start.get("incremental_scopes")):
        if s not in base:
            base.append(s)
    return base


def post(cfg, url, form):
    """POSTs form (with client_id) to an OAuth endpoint; returns the
    response and its decoded body (JSON, or form-encoded as some servers
    answer), always a dict."""
    form = dict(form)
    form["client_id"] = cfg.client_id
    resp = c.http("POST", url, form=form)
    data = resp.json()
    if not isinstance(data, dict):
        data = resp.form() if "form-urlencoded" in (resp.header("Content-Type") or "") else {}
    return resp, data


def token_request(cfg, form):
    return post(cfg, cfg.urls["token_url"], form)


def _seconds(v):
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return v


def credential_from(data, previous=None):
    """The credential file's object from a token response. A refresh that
    returns no new refresh token keeps the old one (RFC 6749 6)."""
    previous = previous or {}
    cred = {
        "access_token": data["access_token"],
        "token_type": data.get("token_type") if isinstance(data.get("token_type"), str) else "bearer",
        "refresh_token": data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else previous.get("refresh_token"),
        "scope": data.get("scope") if isinstance(data.get("scope"), str) else previous.get("scope"),
        "expires_at": c.iso(c.after(_seconds(data.get("expires_in")))),
        "refresh_token_expires_at": c.iso(c.after(_seconds(data.get("refresh_token_expires_in")))),
        "obtained_at": c.iso(c.now()),
    }
    if cred["refresh_token_expires_at"] is None and cred["refresh_token"] == previous.get("refresh_token"):
        cred["refresh_token_expires_at"] = previous.get("refresh_token_expires_at")
    return cred


def protect(out, cred):
    out.protect(cred.get("access_token"), cred.get("refresh_token"))


def store(out, cred):
    protect(out, cred)
    c.write_credential(json.dumps(cred).encode("utf-8"))


def load(out):
    """The stored credential object, or None."""
    raw = c.read_credential()
    if raw is None:
        return None
    out.protect(raw)
    try:
        cred = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(cred, dict) or not isinstance(cred.get("access_token"), str):
        return None
    protect(out, cred)
    return cred


def auth_headers(cfg, cred):
    return {"Authorization": "%s %s" % (cfg.auth_scheme, cred["access_token"])}


def get_user(cfg, cred):
    """GETs the user endpoint; returns (response, latency in ms)."""
    began = time.monotonic()
    resp = c.http("GET", c.join_url(cfg.urls["api_base"], cfg.user_path), headers=auth_headers(cfg, cred))
    return resp, int((time.monotonic() - began) * 1000)


def account_of(cfg, resp):
    """The account name in a user response, or None."""
    data = resp.json() if resp.status == 200 else None
    v = data.get(cfg.login_field) if isinstance(data, dict) else None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or not v.strip():
        return None
    return "".join(ch for ch in v.strip() if ch.isprintable())[:200]


def completion(cfg, cred, account, requested):
    granted = scope_list(cred.get("scope")) if cred.get("scope") else list(requested)
    return {
        "success": True,
        "summary": ("Connected to %s as %s" % (cfg.service, account)) if account else ("Connected to %s" % cfg.service),
        "permissions_granted": granted,
        "account": account,
        "token_expires_at": cred.get("expires_at"),
        "refresh_token_expires_at": cred.get("refresh_token_expires_at"),
    }


def finish_setup(session, cfg, data, requested):
    """Turns a successful token response into the credential file and the
    completion event."""
    cred = credential_from(data)
    protect(session.out, cred)
    account = None
    try:
        resp, _ = get_user(cfg, cred)
        account = account_of(cfg, resp)
    except (c.ServiceError, c.ConfigError) as e:
        session.log("warning", "could not read the account name: %s" % e)
    session.complete(lambda: store(session.out, cred), completion(cfg, cred, account, requested))


def error_failure(cfg, resp, data, what, refresh=False):
    """The ConnectionFailure of an OAuth error answer. Only the error code
    is quoted: the description is the service's text."""
    f = c.status_failure(resp, cfg.service, what)
    if f:
        return f
    err = data.get("error") if isinstance(data.get("error"), str) else ""
    err = err if ERROR_CODE_RE.match(err) else "unknown_error"
    desc = data.get("error_description") if isinstance(data.get("error_description"), str) else ""
    svc = cfg.service
    if err == "admin_consent_required" or any(code in desc for code in ADMIN_BLOCK_CODES):
        return c.failure("enterprise_policy_block", svc, "Your organization's policy does not let this app access %s (%s)." % (svc, err))
    if err == "mfa_required" or any(code in desc for code in MFA_CODES):
        return c.failure("mfa_required", svc, "%s requires multi-factor authentication to complete the setup." % svc)
    if err in ("access_denied", "consent_required"):
        return c.failure("consent_denied", svc, "You declined the authorization; %s was not connected." % svc)
    if err == "slow_down":
        return c.failure("rate_limited", svc, "%s is limiting requests." % svc)
    if err == "invalid_grant" and refresh:
        return c.failure("token_revoked", svc, "%s no longer accepts the stored authorization (revoked or expired); reconnect to continue." % svc)
    if err in ("invalid_client", "unauthorized_client", "incorrect_client_credentials"):
        return c.failure("unknown", svc, "%s does not accept the configured client_id (%s); check the app registration." % (svc, err))
    if resp.status in (401, 403) and refresh:
        return c.failure("token_revoked", svc, "%s refused the refresh (HTTP %d); reconnect to continue." % (svc, resp.status))
    return c.failure("unknown", svc, "%s refused %s (HTTP %d, %s)." % (svc, what, resp.status, err))


# --- the lifecycle scripts -------------------------------------------------

LIFECYCLE_URLS = ("token_url", "api_base")


def health(out, cfg):
    """A HealthCheckResult (spec 3.12). error starts with a stable code:
    not_configured, token_expired, unauthorized, rate_limited,
    service_unavailable or unknown."""
    result = {"healthy": False, "token_expires_at": None, "refresh_token_expires_at": None,
              "latency_ms": 0, "error": None, "warnings": []}
    problems = cfg.problems(LIFECYCLE_URLS)
    cred = load(out)
    if problems:
        result["error"] = "not_configured: " + "; ".join(problems)
        return result
    if cred is None:
        result["error"] = "not_configured: no credential is stored; run the setup"
        return result
    result["token_expires_at"] = cred.get("expires_at")
    result["refresh_token_expires_at"] = cred.get("refresh_token_expires_at")
    expires = c.parse_iso(cred.get("expires_at"))
    if expires is not None and expires <= c.now():
        result["error"] = "token_expired: the access token expired at %s" % c.iso(expires)
        return result
    try:
        resp, latency = get_user(cfg, cred)
    except c.ServiceError as e:
        result["error"] = "service_unavailable: %s" % e
        return result
    result["latency_ms"] = latency
    if resp.status == 200:
        result["healthy"] = True
        if expires is not None and (expires - c.now()).total_seconds() < EXPIRY_WARNING_SECONDS:
            result["warnings"].append("the access token expires within %d minutes" % (EXPIRY_WARNING_SECONDS // 60))
        result["warnings"].extend(rate_warnings(resp))
    elif resp.status in (401, 403):
        result["error"] = "unauthorized: %s rejected the access token (HTTP %d)" % (cfg.service, resp.status)
    elif resp.status == 429:
        result["error"] = "rate_limited: %s is limiting requests (HTTP 429)" % cfg.service
    elif resp.status >= 500:
        result["error"] = "service_unavailable: %s answered HTTP %d" % (cfg.service, resp.status)
    else:
        result["error"] = "unknown: %s answered HTTP %d" % (cfg.service, resp.status)
    return result


def rate_warnings(resp):
    """A warning when most of the rate limit is used (X-RateLimit-*)."""
    try:
        limit = int(resp.header("X-RateLimit-Limit") or 0)
        left = int(resp.header("X-RateLimit-Remaining") or 0)
    except ValueError:
        return []
    if limit > 0 and left < limit // 5:
        return ["rate limit at %d%%" % (100 - left * 100 // limit)]
    return []


def refresh(out, cfg):
    """refresh_token.py's answer, after rewriting the credential file."""
    problems = cfg.problems(LIFECYCLE_URLS)
    if problems:
        return {"success": False, "failure": c.not_configured(cfg.service, problems)}
    cred = load(out)
    if cred is None:
        return {"success": False, "failure": c.failure("token_revoked", cfg.service, "No credential is stored for %s; reconnect to continue." % cfg.service)}
    if not cred.get("refresh_token"):
        if not cred.get("expires_at"):
            # A token that does not expire needs no refresh.
            return {"success": True, "new_expires_at": None, "refresh_token_expires_at": None}
        return {"success": False, "failure": c.failure("token_revoked", cfg.service, "%s gave no refresh token, so the access cannot be renewed; reconnect to continue." % cfg.service)}
    rt_expires = c.parse_iso(cred.get("refresh_token_expires_at"))
    if rt_expires is not None and rt_expires <= c.now():
        return {"success": False, "failure": c.failure("token_revoked", cfg.service, "The %s refresh token expired; reconnect to continue." % cfg.service)}
    try:
        resp, data = token_request(cfg, {"grant_type": "refresh_token", "refresh_token": cred["refresh_token"]})
    except c.ServiceError as e:
        return {"success": False, "failure": c.failure("service_unavailable", cfg.service, "%s." % e)}
    if resp.status != 200 or not isinstance(data.get("access_token"), str):
        return {"success": False, "failure": error_failure(cfg, resp, data, "the token refresh", refresh=True)}
    new = credential_from(data, cred)
    store(out, new)
    return {"success": True, "new_expires_at": new.get("expires_at"), "refresh_token_expires_at": new.get("refresh_token_expires_at")}


def call_failure(cfg, resp):
    """The failure of an API call that did not answer 200."""
    f = c.status_failure(resp, cfg.service, "the API call")
    if f:
        return f
    if resp.status in (401, 403):
        return c.failure("token_revoked", cfg.service, "%s rejected the access token (HTTP %d); reconnect to continue." % (cfg.service, resp.status))
    return c.failure("unknown", cfg.service, "%s answered HTTP %d." % (cfg.service, resp.status))


def recover(out, cfg, error):
    """recover.py's answer: checks whether the service accepts the stored
    token again, and says what the owner must do when it does not. It never
    changes the credential (refresh_token.py does that)."""
    problems = cfg.problems(LIFECYCLE_URLS)
    if problems:
        return {"success": False, "failure": c.not_configured(cfg.service, problems)}
    cred = load(out)
    if cred is None:
        return {"success": False, "failure": c.failure("token_revoked", cfg.service, "No credential is stored for %s; reconnect to continue." % cfg.service)}
    expires = c.parse_iso(cred.get("expires_at"))
    if expires is not None and expires <= c.now():
        return {"success": False, "failure": c.failure("token_revoked", cfg.service, "The %s access token expired and could not be renewed; reconnect to continue." % cfg.service)}
    try:
        resp, _ = get_user(cfg, cred)
    except c.ServiceError as e:
        return {"success": False, "failure": c.failure("service_unavailable", cfg.service, "%s." % e)}
    if resp.status == 200:
        return {"success": True}
    return {"success": False, "failure": call_failure(cfg, resp)}


def probe(out, cfg, capability):
    """probe.py's answer for a capability; "user" reads the account."""
    if capability != "user":
        return {"ok": False, "failure": c.failure("unknown", cfg.service, "Unknown capability %r; this connection can probe: user." % capability[:40])}
    problems = cfg.problems(LIFECYCLE_URLS)
    if problems:
        return {"ok": False, "failure": c.not_configured(cfg.service, problems)}
    cred = load(out)
    if cred is None:
        return {"ok": False, "failure": c.failure("token_revoked", cfg.service, "No credential is stored for %s; reconnect to continue." % cfg.service)}
    try:
        resp, latency = get_user(cfg, cred)
    except c.ServiceError as e:
        return {"ok": False, "failure": c.failure("service_unavailable", cfg.service, "%s." % e)}
    if resp.status != 200:
        return {"ok": False, "failure": call_failure(cfg, resp)}
    account = account_of(cfg, resp)
    summary = ("Signed in to %s as %s" % (cfg.service, account)) if account else ("%s accepts the token" % cfg.service)
    return {"ok": True, "summary": summary, "account": account, "latency_ms": latency}


def api_request(out, cfg, method, path, body):
    """api_request.py's answer: the API's status and body, with the
    credential scrubbed from it."""
    problems = cfg.problems(LIFECYCLE_URLS)
    if problems:
        return {"ok": False, "status": None, "error": "not_configured: " + "; ".join(problems)}
    cred = load(out)
    if cred is None:
        return {"ok": False, "status": None, "error": "not_configured: no credential is stored; run the setup"}
    return c.api_call(out, cfg.urls["api_base"], path, method, auth_headers(cfg, cred), body)
