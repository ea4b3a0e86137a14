"""Helpers of the api-key connection: the settings, the stored key, and
the health, recover, probe and API scripts."""

import re
import time

from lib import connection as c

HEADER_RE = re.compile(r"^[A-Za-z0-9-]{1,64}$")
# Headers a key must not be sent in: they would change the request itself.
FORBIDDEN_HEADERS = ("host", "content-length", "content-type", "transfer-encoding", "connection", "cookie", "expect", "te", "upgrade")
PREFIX_RE = re.compile(r"^[\x20-\x7E]{0,32}$")
MAX_KEY = 4096


class Config:
    """The settings of an API-key connection, checked."""

    def __init__(self, settings):
        self.settings = settings
        self.service = c.service_name(settings)
        self.check_path = c.setting(settings, "check_path", "/")
        self.header = c.setting(settings, "header", "X-Api-Key")
        prefix = settings.get("header_prefix")
        self.prefix = prefix if isinstance(prefix, str) else ""
        self.login_field = c.setting(settings, "login_field", "login")
        self.api_base = ""

    def problems(self):
        values, problems = c.url_settings(self.settings, ("api_base",))
        self.api_base = values.get("api_base", "")
        if not HEADER_RE.match(self.header) or self.header.lower() in FORBIDDEN_HEADERS:
            problems.append("header must be a header name such as X-Api-Key or Authorization")
        if not PREFIX_RE.match(self.prefix):
            problems.append("header_prefix must be at most 32 printable characters, such as \"Bearer \"")
        if not self.check_path.startswith("/"):
            problems.append("check_path must start with /")
        return problems


def load_key(out):
    """The stored key (surrounding white space removed), or None when there
    is none or it cannot go into a header."""
    raw = c.read_credential()
    if raw is None:
        return None
    out.protect(raw)
    try:
        key = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if not key or len(key) > MAX_KEY or any(ord(ch) < 0x20 or ord(ch) > 0x7E for ch in key):
        return None
    out.protect(key)
    return key


def headers(cfg, key):
    return {cfg.header: cfg.prefix + key}


def check(cfg, key):
    """GETs check_path with the key; returns (response, latency in ms)."""
    began = time.monotonic()
    resp = c.http("GET", c.join_url(cfg.api_base, cfg.check_path), headers=headers(cfg, key))
    return resp, int((time.monotonic() - began) * 1000)


def account_of(cfg, resp):
    data = resp.json() if resp.status == 200 else None
    v = data.get(cfg.login_field) if isinstance(data, dict) else None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or not v.strip():
        return None
    return "".join(ch for ch in v.strip() if ch.isprintable())[:200]


def rejected(cfg, resp):
    """The failure of a check that did not answer 200."""
    f = c.status_failure(resp, cfg.service, "the key check")
    if f:
        return f
    if resp.status in (401, 403):
        return c.failure("token_revoked", cfg.service, "%s does not accept the API key (HTTP %d); enter a valid key to reconnect." % (cfg.service, resp.status))
    return c.failure("unknown", cfg.service, "%s answered HTTP %d to the key check." % (cfg.service, resp.status))


def no_key(cfg):
    return c.failure("token_revoked", cfg.service, "No usable API key is stored for %s; enter it again to reconnect." % cfg.service)


def health(out, cfg):
    """A HealthCheckResult (spec 3.12); error starts with a code as in the
    OAuth connections."""
    result = {"healthy": False, "token_expires_at": None, "refresh_token_expires_at": None,
              "latency_ms": 0, "error": None, "warnings": []}
    problems = cfg.problems()
    key = load_key(out)
    if problems:
        result["error"] = "not_configured: " + "; ".join(problems)
        return result
    if key is None:
        result["error"] = "not_configured: no usable API key is stored; run the setup"
        return result
    try:
        resp, latency = check(cfg, key)
    except c.ServiceError as e:
        result["error"] = "service_unavailable: %s" % e
        return result
    result["latency_ms"] = latency
    if resp.status == 200:
        result["healthy"] = True
    elif resp.status in (401, 403):
        result["error"] = "unauthorized: %s rejected the API key (HTTP %d)" % (cfg.service, resp.status)
    elif resp.status == 429:
        result["error"] = "rate_limited: %s is limiting requests (HTTP 429)" % cfg.service
    elif resp.status >= 500:
        result["error"] = "service_unavailable: %s answered HTTP %d" % (cfg.service, resp.status)
    else:
        result["error"] = "unknown: %s answered HTTP %d" % (cfg.service, resp.status)
    return result


def verify(out, cfg):
    """Runs the key check; returns (failure or None, account, latency)."""
    problems = cfg.problems()
    if problems:
        return c.not_configured(cfg.service, problems), None, 0
    key = load_key(out)
    if key is None:
        return no_key(cfg), None, 0
    try:
        resp, latency = check(cfg, key)
    except c.ServiceError as e:
        return c.failure("service_unavailable", cfg.service, "%s." % e), None, 0
    if resp.status != 200:
        return rejected(cfg, resp), None, latency
    return None, account_of(cfg, resp), latency


def api_request(out, cfg, method, path, body):
    problems = cfg.problems()
    if problems:
        return {"ok": False, "status": None, "error": "not_configured: " + "; ".join(problems)}
    key = load_key(out)
    if key is None:
        return {"ok": False, "status": None, "error": "not_configured: no usable API key is stored; run the setup"}
    return c.api_call(out, cfg.api_base, path, method, headers(cfg, key), body)
