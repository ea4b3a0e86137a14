"""Helpers every Silas connection script shares: the environment, the
settings, the credential file, HTTP, and the output protocol of
docs/connections.md. Standard library only.

This file is the same in every bundled connection skill (a test checks
that the copies do not drift apart).
"""

import datetime
import json
import os
import queue
import re
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# Every stdout line is one JSON object of at most 64 KiB; stay below it.
MAX_LINE = 60000
# A line read from stdin is at most this long.
MAX_INPUT_LINE = 1 << 20
# A response body is read up to this many bytes.
MAX_BODY = 1 << 20
USER_AGENT = "silas-connection/1.0"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
REF_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

FAILURE_TYPES = (
    "enterprise_policy_block",
    "consent_denied",
    "mfa_required",
    "rate_limited",
    "service_unavailable",
    "token_revoked",
    "unknown",
)

_SKIP = ("skip", "Skip", "Leave the service unconnected for now", "low")
_RETRY = ("retry", "Retry", "Run the setup again", "low")
RECOVERY = {
    "enterprise_policy_block": [
        ("request_admin_approval", "Draft IT request", "Draft a request asking your IT admin to allow this app", "low"),
        ("use_personal_account", "Use personal account", "Connect with a personal account instead", "low"),
        _SKIP,
    ],
    "consent_denied": [
        _RETRY,
        ("retry_fewer_permissions", "Retry with fewer permissions", "Ask for the minimum permissions only", "low"),
        _SKIP,
    ],
    "mfa_required": [("retry", "Retry", "Complete multi-factor authentication, then try again", "low"), _SKIP],
    "token_revoked": [("reconnect", "Reconnect", "Run the setup again", "low"), _SKIP],
    "rate_limited": [("retry_later", "Retry later", "Try again once the service stops limiting requests", "low"), _SKIP],
    "service_unavailable": [("retry_later", "Retry later", "Try again when the service answers", "low"), _SKIP],
    "unknown": [_RETRY, _SKIP],
}


# --- environment -----------------------------------------------------------


def connection_id():
    return os.environ.get("SILAS_CONNECTION_ID") or ""


def credential_ref():
    """The keystore ref_id of this connection's credential, or "" when it
    is missing or not a plain file name."""
    ref = os.environ.get("SILAS_CREDENTIAL_REF") or ""
    return ref if REF_RE.match(ref) and ".." not in ref else ""


def secrets_dir():
    return os.environ.get("SILAS_SECRETS_DIR") or ""


def load_settings(extra=None):
    """The connection's non-secret settings: SILAS_CONNECTION_SETTINGS,
    with the settings of a start or discover event on top."""
    out = {}
    raw = os.environ.get("SILAS_CONNECTION_SETTINGS") or ""
    if raw:
        try:
            v = json.loads(raw)
        except ValueError:
            v = None
        if isinstance(v, dict):
            out.update(v)
    if isinstance(extra, dict):
        out.update(extra)
    return out


def setting(settings, key, default=""):
    """A text setting, stripped; default when absent or not text."""
    v = settings.get(key)
    if isinstance(v, str) and v.strip():
        return v.strip()
    return default


def int_setting(settings, key, default, lo, hi):
    v = settings.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return default
    return max(lo, min(hi, int(v)))


def check_url(url):
    """None when url may be called: https, or http to a loopback address
    (tests and local services). Otherwise why not."""
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError:
        return "is not a URL"
    if u.username is not None or u.password is not None:
        return "must not hold a user name or password"
    if u.fragment:
        return "must not hold a fragment"
    host = u.hostname or ""
    if u.scheme == "https" and host:
        return None
    if u.scheme == "http" and host in LOOPBACK_HOSTS:
        return None
    return "must be an https:// URL (http:// only for 127.0.0.1 or localhost)"


def url_settings(settings, keys):
    """Checks the URL settings keys; returns (values, problems)."""
    values, problems = {}, []
    for k in keys:
        v = setting(settings, k)
        if not v:
            problems.append("%s is not set" % k)
            continue
        why = check_url(v)
        if why:
            problems.append("%s %s" % (k, why))
            continue
        values[k] = v
    return values, problems


def service_name(settings):
    name = setting(settings, "service_name")
    if name:
        return name[:100]
    for k in ("api_base", "token_url", "authorization_url", "device_authorization_url"):
        host = urllib.parse.urlsplit(setting(settings, k)).hostname if setting(settings, k) else None
        if host:
            return host
    return "the service"


# --- the credential file ---------------------------------------------------


def credential_path():
    """$SILAS_SECRETS_DIR/$SILAS_CREDENTIAL_REF, or None when either is
    missing."""
    ref, d = credential_ref(), secrets_dir()
    if not ref or not d:
        return None
    return os.path.join(d, ref)


def read_credential():
    """The stored credential's bytes, or None."""
    p = credential_path()
    if not p:
        return None
    try:
        with open(p, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return None
    return data or None


def write_credential(data):
    """Replaces the credential file atomically: a temporary file in the
    same directory, renamed over it."""
    p = credential_path()
    if not p:
        raise ConfigError("SILAS_SECRETS_DIR and SILAS_CREDENTIAL_REF are not set")
    d = os.path.dirname(p)
    os.makedirs(d, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_credential():
    """Removes the credential file and any temporary file left beside it."""
    p = credential_path()
    if not p:
        return
    d = os.path.dirname(p)
    try:
        names = os.listdir(d)
    except OSError:
        names = []
    for n in names:
        if n.startswith(".tmp-"):
            try:
                os.unlink(os.path.join(d, n))
            except OSError:
                pass
    try:
        os.unlink(p)
    except OSError:
        pass


# --- failures and output ---------------------------------------------------


class ConfigError(Exception):
    """The connection is not configured well enough to run."""


class ServiceError(Exception):
    """The service could not be reached."""


def failure(failure_type, service, message, retry_minutes=None):
    """A ConnectionFailure (spec 3.12) with the recovery options of spec
    5.10.4 for its type."""
    if failure_type not in FAILURE_TYPES:
        failure_type = "unknown"
    options = []
    for action, label, desc, risk in RECOVERY[failure_type]:
        if action == "retry_later" and retry_minutes:
            label = "Retry in %d minutes" % retry_minutes
        options.append({"action": action, "label": label, "description": desc, "risk_level": risk})
    return {
        "failure_type": failure_type,
        "service": (service or "the service")[:200],
        "message": message[:2000],
        "recovery_options": options,
    }


def not_configured(service, problems):
    return failure("unknown", service, "The connection is not configured: %s." % "; ".join(problems))


def scrub(text, secrets):
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "[REDACTED]")
    return text


def scrub_value(v, secrets):
    """v (decoded JSON) with every credential string replaced."""
    if isinstance(v, str):
        return scrub(v, secrets)
    if isinstance(v, list):
        return [scrub_value(x, secrets) for x in v]
    if isinstance(v, dict):
        return {scrub(str(k), secrets): scrub_value(x, secrets) for k, x in v.items()}
    return v


class Output:
    """Writes protocol lines to stdout: one JSON object a line, never one
    that holds a known credential, never longer than MAX_LINE."""

    def __init__(self):
        self.lock = threading.RLock()
        self.secrets = []

    def protect(self, *values):
        """Never print these values (the credential and its parts)."""
        for v in values:
            if isinstance(v, (bytes, bytearray)):
                v = v.decode("utf-8", "replace")
            if isinstance(v, str) and len(v.strip()) >= 4:
                self.secrets.append(v.strip())

    def line(self, obj):
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=True)
        if any(s in text for s in self.secrets):
            text = json.dumps({"type": "log", "level": "warning", "message": "a line was withheld because it held the credential"})
        if len(text) > MAX_LINE:
            text = json.dumps({"type": "log", "level": "warning", "message": "a line was withheld because it was too long"})
        with self.lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()


def diagnose(exc, secrets=()):
    """Writes one line about exc to stderr (never a traceback, which could
    carry values)."""
    sys.stderr.write(scrub("%s: %s\n" % (type(exc).__name__, str(exc)[:300]), secrets))
    sys.stderr.flush()


def read_request():
    """The one request line of a request/response script, decoded; {} when
    stdin is empty or holds no JSON object."""
    try:
        raw = sys.stdin.buffer.readline(MAX_INPUT_LINE)
    except (OSError, ValueError, AttributeError):
        return {}
    try:
        v = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


# --- time ------------------------------------------------------------------


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def iso(t):
    """RFC 3339 UTC text of t, or None."""
    if t is None:
        return None
    return t.astimezone(datetime.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(s):
    if not isinstance(s, str) or not s:
        return None
    try:
        t = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t


def after(seconds):
    """now + seconds as a datetime, or None when seconds is not a positive
    number."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        return None
    return now() + datetime.timedelta(seconds=int(seconds))


# --- HTTP ------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answered, not followed: a credential must never be
    sent on to another address."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_opener = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        """The body decoded as JSON, or None."""
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            return None

    def form(self):
        """The body decoded as application/x-www-form-urlencoded."""
        try:
            return dict(urllib.parse.parse_qsl(self.body.decode("utf-8"), keep_blank_values=True))
        except ValueError:
            return {}

    def header(self, name):
        return self.headers.get(name) if self.headers is not None else None


def http(method, url, headers=None, form=None, body=None, timeout=30):
    """Sends one request and returns a Response for any HTTP status.
    form is sent as application/x-www-form-urlencoded, body (bytes) as
    JSON. Raises ServiceError when the service cannot be reached."""
    why = check_url(url)
    if why:
        raise ConfigError("the URL %s" % why)
    h = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    h.update(headers or {})
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode("ascii")
        h["Content-Type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = body
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=h, method=method)
    try:
        with _opener.open(req, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read(MAX_BODY))
    except urllib.error.HTTPError as e:
        try:
            b = e.read(MAX_BODY)
        except OSError:
            b = b""
        return Response(e.code, e.headers, b)
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise ServiceError("%s is unreachable (%s)" % (urllib.parse.urlsplit(url).hostname, type(reason).__name__)) from None


def retry_minutes(resp):
    """Minutes from a Retry-After header, or None."""
    v = resp.header("Retry-After") if resp is not None else None
    if v and v.strip().isdigit():
        return max(1, (int(v.strip()) + 59) // 60)
    return None


def status_failure(resp, service, what):
    """The failure of an HTTP status that is not a success, or None for
    statuses the caller must judge (4xx other than 429)."""
    if resp.status == 429:
        return failure("rate_limited", service, "%s is limiting requests (HTTP 429)." % service, retry_minutes(resp))
    if resp.status >= 500:
        return failure("service_unavailable", service, "%s answered HTTP %d to %s." % (service, resp.status, what))
    return None


def join_url(base, path):
    """base + path, refused (ConfigError) when path could leave base: it
    must start with one "/", and hold no "." or ".." segment, backslash,
    fragment or control character."""
    if not path.startswith("/") or path.startswith("//"):
        raise ConfigError("the path must start with a single /")
    if any(c in path for c in "\\#") or any(ord(c) < 0x21 or ord(c) == 0x7F for c in path):
        raise ConfigError("the path holds a character that is not allowed")
    segments = urllib.parse.unquote(path.split("?", 1)[0]).split("/")
    if any(s in (".", "..") for s in segments):
        raise ConfigError("the path must not hold . or .. segments")
    return base.rstrip("/") + path


METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def api_call(out, base, path, method, headers, body_text):
    """Calls the API at base + path with the credential's headers and
    returns api_request.py's answer: ok, status and the body (decoded JSON,
    else text), with every credential value scrubbed and the body cut to
    fit one output line."""
    if method not in METHODS:
        return {"ok": False, "status": None, "error": "bad_request: the method must be one of %s" % ", ".join(METHODS)}
    try:
        url = join_url(base, path)
    except ConfigError as e:
        return {"ok": False, "status": None, "error": "bad_request: %s" % e}
    data = None
    if body_text:
        try:
            json.loads(body_text)
        except ValueError:
            return {"ok": False, "status": None, "error": "bad_request: the body is not JSON"}
        data = body_text.encode("utf-8")
    try:
        resp = http(method, url, headers=headers, body=data)
    except ServiceError as e:
        return {"ok": False, "status": None, "error": "service_unavailable: %s" % e}
    value = resp.json()
    if value is None:
        value = resp.body.decode("utf-8", "replace")
    value = scrub_value(value, out.secrets)
    result = {"ok": 200 <= resp.status < 300, "status": resp.status,
              "content_type": (resp.header("Content-Type") or "")[:100], "body": value, "truncated": False}
    if len(json.dumps(value)) > MAX_LINE - 1000:
        result["body"] = json.dumps(value)[: MAX_LINE // 4]
        result["truncated"] = True
    if 300 <= resp.status < 400 and resp.header("Location"):
        result["location"] = scrub(resp.header("Location")[:2000], out.secrets)
    return result


# --- the streaming setup protocol -----------------------------------------


class Session:
    """The script's side of setup.py's NDJSON protocol (spec 5.10.1): a
    thread reads stdin into a queue; a cancel event runs the cleanups and
    ends the process at once, whatever the main thread is doing."""

    def __init__(self, out):
        self.out = out
        self.events = queue.Queue()
        self.cleanups = []
        self.done = False
        t = threading.Thread(target=self._read, daemon=True)
        t.start()

    def _read(self):
        stdin = sys.stdin.buffer
        while True:
            try:
                raw = stdin.readline(MAX_INPUT_LINE)
            except (OSError, ValueError):
                raw = b""
            if not raw:
                self.events.put({"type": "_eof"})
                return
            try:
                msg = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                msg = None
            if not isinstance(msg, dict):
                self.log("warning", "ignored an input line that is not a JSON object")
                continue
            if msg.get("type") == "cancel":
                self.cancel()
            self.events.put(msg)

    def cancel(self):
        """Cleans up and exits: nothing partial stays behind."""
        with self.out.lock:
            if not self.done:
                for fn in self.cleanups:
                    try:
                        fn()
                    except Exception:  # noqa: BLE001 - cleanup is best effort
                        pass
            sys.stdout.flush()
            os._exit(0)

    def next(self, timeout=None):
        """The next event, or None after timeout seconds."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def sleep(self, seconds):
        """Waits seconds; events other than cancel are dropped meanwhile."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            self.next(timeout=left)

    def start(self):
        """Waits for the start event and returns it, or None when stdin
        closed first."""
        while True:
            msg = self.next()
            if msg.get("type") == "start":
                return msg
            if msg.get("type") == "_eof":
                return None

    def emit(self, obj):
        self.out.line(obj)

    def log(self, level, message):
        self.out.line({"type": "log", "level": level, "message": message})

    def step(self, step_id, step):
        self.out.line({"type": "setup_step", "step_id": step_id, "step": step})

    def fail(self, f):
        """Runs the cleanups, emits the failure and ends the script."""
        with self.out.lock:
            for fn in self.cleanups:
                try:
                    fn()
                except Exception:  # noqa: BLE001 - cleanup is best effort
                    pass
            self.done = True
            self.out.line({"type": "failure", "failure": f})
            finish()

    def complete(self, write, payload):
        """Calls write() (which writes the credential file), then emits the
        completion and ends the script; a cancel cannot come in between."""
        with self.out.lock:
            write()
            self.done = True
            self.out.line({"type": "completion", "connection_payload": payload})
            finish()


def finish(code=0):
    """Ends the process at once. A plain exit could abort while the stdin
    thread holds the stdin lock (Python's daemon thread shutdown)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def run_setup(main):
    """Runs main(session); any unexpected error becomes a failure line."""
    out = Output()
    session = Session(out)
    try:
        main(session)
    except SystemExit as e:
        finish(e.code if isinstance(e.code, int) else 0)
    except Exception as e:  # noqa: BLE001 - reported as a ConnectionFailure
        diagnose(e, out.secrets)
        session.fail(failure("unknown", "the service", "The setup script failed (%s); see its diagnostics." % type(e).__name__))
    finish()


def run_once(main, on_error):
    """Runs main(out) of a request/response script; an unexpected error is
    printed as on_error(failure) so the runtime always gets an answer."""
    out = Output()
    try:
        main(out)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - reported as a ConnectionFailure
        diagnose(e, out.secrets)
        out.line(on_error(failure("unknown", "the service", "The script failed (%s); see its diagnostics." % type(e).__name__)))
