"""The lab's payments handler, for the Python servers.

It answers as `crates/retrykey-http/src/payments.rs` does, with no idempotency of its own:

- POST /payments {"amount": N}: 201 {"payment": ID}, Location /payments/ID, JSON.
- GET /payments/count: 200 {"charges": C}.
- X-Delay-Ms: N sleeps N ms (at most 60 s) before anything else.
- X-Flaky: V answers 500 to the first request with each distinct V, before charging.
- X-Panic: V raises an exception in the first request with each distinct V, before charging:
  what the caller gets is the framework's.
- X-Set-Cookie: any value makes the answer set a cookie (receipt=ID).

The framework glue sleeps (`delay_seconds`) in its own way, then calls `pay`.
"""

import json
import os
import sys
import threading

PROBLEM = "application/problem+json"


class Payments:
    def __init__(self):
        self._lock = threading.Lock()
        self._charges = 0
        self._flaky_seen = set()

    @staticmethod
    def delay_seconds(headers):
        """How long the X-Delay-Ms header asks the handler to work, in seconds."""
        try:
            ms = int(headers.get("x-delay-ms", "0"))
        except ValueError:
            ms = 0
        return max(0, min(ms, 60_000)) / 1000

    def pay(self, headers, body):
        """The answer to POST /payments (after the delay): (status, headers, body bytes)."""
        if self._first(headers.get("x-panic"), "panic"):
            raise RuntimeError("the request asked the payments handler to throw (X-Panic)")
        token = headers.get("x-flaky")
        if token is not None:
            with self._lock:
                first = token not in self._flaky_seen
                self._flaky_seen.add(token)
            if first:
                return problem(500, "database-unavailable", "Database unavailable")
        try:
            amount = json.loads(body).get("amount")
        except (ValueError, AttributeError):
            amount = None
        if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
            return problem(
                400,
                "invalid-payment",
                'Expected a JSON body {"amount": N} with N a positive integer',
            )
        with self._lock:
            self._charges += 1
            payment = self._charges
        answer = [("Content-Type", "application/json"), ("Location", f"/payments/{payment}")]
        if headers.get("x-set-cookie") is not None:
            answer.append(("Set-Cookie", f"receipt={payment}; Path=/; HttpOnly"))
        return 201, answer, (json.dumps({"payment": payment}, separators=(",", ":")) + "\n").encode()

    def _first(self, token, hook):
        """Whether `token` of `hook` is seen for the first time (None: the hook was not asked)."""
        if token is None:
            return False
        with self._lock:
            first = (hook, token) not in self._flaky_seen
            self._flaky_seen.add((hook, token))
        return first

    def count(self):
        """The answer to GET /payments/count."""
        with self._lock:
            charges = self._charges
        body = json.dumps({"charges": charges}, separators=(",", ":")) + "\n"
        return 200, [("Content-Type", "application/json")], body.encode()


def problem(status, slug, title):
    body = json.dumps(
        {"type": f"urn:retrykey:problem:{slug}", "title": title, "status": status},
        separators=(",", ":"),
    )
    return status, [("Content-Type", PROBLEM)], body.encode()


def port():
    """The port: the first argument, else $PORT."""
    value = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", "")
    if not value.isdigit():
        sys.exit("usage: python SERVER.py PORT (or PORT=... in the environment)")
    return int(value)
