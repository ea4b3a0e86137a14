#!/usr/bin/env python3
"""Call the connected service's API with the stored API key.

Arguments (passed as --name=value):
  --method  GET, POST, PUT, PATCH or DELETE
  --path    the path below the api_base setting, starting with /
            (a query string is allowed)
  --body    a JSON request body (optional)

The key goes in the header setting (with header_prefix before it).
Prints one line: {"ok": ..., "status": ..., "content_type": ...,
"body": <JSON or text>, "truncated": ...}, or {"ok": false, "status":
null, "error": "..."} when the call could not be made. The key is never
printed: any copy of it in the answer is replaced. Exit status 0 when an
answer was printed.
"""

import argparse

from lib import apikey
from lib import connection as c


def main(out):
    p = argparse.ArgumentParser(description="Call the service's API with the connection's API key.")
    p.add_argument("--method", default="GET")
    p.add_argument("--path", required=True)
    p.add_argument("--body", default="")
    args = p.parse_args()
    out.line(apikey.api_request(out, apikey.Config(c.load_settings()), args.method, args.path, args.body))


if __name__ == "__main__":
    c.run_once(main, lambda f: {"ok": False, "status": None, "error": "unknown: " + f["message"]})
