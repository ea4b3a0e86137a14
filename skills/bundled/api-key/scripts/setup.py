#!/usr/bin/env python3
"""Connect with an API key the owner enters through Silas's secure input.

Speaks setup.py's NDJSON protocol (spec 5.10.1, docs/connections.md):
reads the start event on stdin, emits a secure_input setup step whose
ref_id is $SILAS_CREDENTIAL_REF, then await_input. The owner types the
key into the secure form; the runtime writes it to the credential file
and answers with a step_result. The script refuses a step_result for any
other ref_id, checks the key against the service (check_path), and emits
the completion, or a failure (removing the rejected key). A cancel event
on stdin ends it at once. Exit status 0.
"""

import argparse

from lib import apikey
from lib import connection as c

STEP = "s1"


def main(session):
    start = session.start()
    if start is None:
        session.fail(c.failure("unknown", "the service", "The setup got no start event."))
    settings = c.load_settings(start.get("settings"))
    cfg = apikey.Config(settings)
    svc = cfg.service
    problems = cfg.problems()
    ref = c.credential_ref()
    if not ref or not c.credential_path():
        problems.append("SILAS_SECRETS_DIR and SILAS_CREDENTIAL_REF are not set")
    if problems:
        session.fail(c.not_configured(svc, problems))
    session.cleanups.append(c.remove_credential)

    help_url = c.setting(settings, "help_url")
    if help_url and c.check_url(help_url):
        help_url = ""
    hint = c.setting(settings, "key_hint")
    session.step(STEP, {"type": "secure_input", "request": {
        "ref_id": ref,
        "label": c.setting(settings, "label", "%s API key" % svc)[:200],
        "input_hint": hint[:40] or None,
        "guidance": {
            "instructions": c.setting(settings, "instructions", "Create an API key in your %s account settings and paste it here. Silas stores it in its keystore and never shows it to the assistant." % svc)[:2000],
            "help_url": help_url or None,
        },
    }})
    session.emit({"type": "await_input", "step_id": STEP})

    while True:
        msg = session.next()
        if msg.get("type") == "_eof":
            session.fail(c.failure("unknown", svc, "The setup ended before the key was entered. Retry to enter it."))
        if msg.get("type") != "step_result" or msg.get("step_id") != STEP:
            continue
        payload = msg.get("payload") if isinstance(msg.get("payload"), dict) else {}
        if payload.get("ref_id") != ref:
            session.fail(c.failure("unknown", svc, "The secure input answered for another ref_id, so it was refused. Retry to enter the key again."))
        if payload.get("success") is not True:
            session.fail(c.failure("unknown", svc, "The key was not stored. Retry to enter it again."))
        break

    failure, account, _ = apikey.verify(session.out, cfg)
    if failure:
        session.fail(failure)
    summary = ("Connected to %s as %s" % (svc, account)) if account else ("Connected to %s; the API key works" % svc)
    session.complete(lambda: None, {
        "success": True,
        "summary": summary,
        "permissions_granted": [],
        "account": account,
        "token_expires_at": None,
        "refresh_token_expires_at": None,
    })


if __name__ == "__main__":
    argparse.ArgumentParser(description="Run the secure input setup (NDJSON on stdin and stdout).").parse_args()
    c.run_setup(main)
