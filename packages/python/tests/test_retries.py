"""The retry policy and error shapes against a scripted local HTTP server: what is waited for, what
is raised at once, and bodies that are no problem. Waits are recorded, never timed."""

import gzip
import json
import threading
import unittest
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from time import time

from pricepoint import (
    InternalServerError,
    PricepointClient,
    PricepointError,
    RateLimitedError,
    ServiceUnavailableError,
)

KEY = "pp_test_python0retries0test0key00000000"
USAGE = {"keyId": "k1", "tier": "demo", "limits": [], "kinds": None, "historyDays": 31}


def problem(status, code, headers=None):
    body = {"type": "about:blank", "title": code, "status": status, "detail": f"{code} here", "code": code}
    return status, {"content-type": "application/problem+json", "x-request-id": "req-1", **(headers or {})}, body


OK = (200, {"content-type": "application/json", "x-ratelimit-limit": "30", "x-ratelimit-remaining": "29",
            "x-ratelimit-reset": "1795342560"}, USAGE)


class Scripted(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the name http.server calls)
        server = self.server
        server.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        status, headers, body = server.script[min(len(server.seen), len(server.script)) - 1]
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        if headers.get("content-encoding") == "gzip":
            data = gzip.compress(data)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class RetryPolicy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def client(self, script, **options):
        self.server.script = script
        self.server.seen = []
        self.waits = []
        self.events = []
        client = PricepointClient(KEY, self.base, on_retry=self.events.append, **options)
        client._transport._sleep = self.waits.append  # record the waits instead of sleeping them
        return client

    def test_the_key_goes_in_a_header_never_in_the_url(self):
        client = self.client([OK])
        client.usage()
        path, headers = self.server.seen[0]
        self.assertEqual(path, "/api/v1/usage")
        self.assertEqual(headers.get("x-api-key"), KEY)
        self.assertNotIn(KEY, repr(client))
        self.assertEqual(client.last_rate_limit.remaining, 29)

    def test_a_429_is_waited_for_as_retry_after_says_then_the_call_succeeds(self):
        client = self.client([problem(429, "rate_limited", {"retry-after": "2"}), OK])
        self.assertEqual(client.usage().tier, "demo")
        self.assertEqual(self.waits, [2.0])
        self.assertEqual([(e.retry, e.delay, e.error.status) for e in self.events], [(1, 2.0, 429)])

    def test_retry_after_as_an_http_date(self):
        at = formatdate(time() + 30, usegmt=True)
        client = self.client([problem(429, "rate_limited", {"retry-after": at}), OK])
        client.usage()
        self.assertEqual(len(self.waits), 1)
        self.assertTrue(28 <= self.waits[0] <= 31, self.waits)

    def test_a_wait_longer_than_max_retry_delay_is_raised_at_once_with_retry_after(self):
        client = self.client([problem(429, "rate_limited", {"retry-after": "3600"}), OK], max_retry_delay=60)
        with self.assertRaises(RateLimitedError) as raised:
            client.usage()
        self.assertEqual(raised.exception.retry_after, 3600)
        self.assertEqual(raised.exception.request_id, "req-1")
        self.assertEqual(self.waits, [])
        self.assertEqual(len(self.server.seen), 1)

    def test_retries_are_bounded_by_max_retries(self):
        client = self.client([problem(429, "rate_limited", {"retry-after": "1"})], max_retries=2)
        with self.assertRaises(RateLimitedError):
            client.usage()
        self.assertEqual(self.waits, [1.0, 1.0])
        self.assertEqual(len(self.server.seen), 3)

    def test_max_retries_0_raises_the_first_429(self):
        client = self.client([problem(429, "rate_limited", {"retry-after": "1"}), OK], max_retries=0)
        with self.assertRaises(RateLimitedError):
            client.usage()
        self.assertEqual(len(self.server.seen), 1)

    def test_a_503_backs_off_with_jitter_within_the_bounds(self):
        client = self.client([problem(503, "service_unavailable")] * 2 + [OK], retry_base_delay=0.5)
        client.usage()
        self.assertEqual(len(self.waits), 2)
        self.assertTrue(0 <= self.waits[0] <= 0.5 and 0 <= self.waits[1] <= 1.0, self.waits)
        client = self.client([problem(503, "service_unavailable")], max_retries=1)
        with self.assertRaises(ServiceUnavailableError):
            client.usage()

    def test_other_errors_are_raised_at_once(self):
        client = self.client([problem(500, "internal"), OK])
        with self.assertRaises(InternalServerError) as raised:
            client.usage()
        self.assertEqual((raised.exception.status, raised.exception.detail), (500, "internal here"))
        self.assertEqual(len(self.server.seen), 1)

    def test_a_body_that_is_no_problem_still_gives_a_pricepoint_error(self):
        client = self.client([(502, {"content-type": "text/html"}, b"<html>bad gateway</html>")], max_retries=0)
        with self.assertRaises(PricepointError) as raised:
            client.usage()
        self.assertIs(type(raised.exception), PricepointError)
        self.assertEqual((raised.exception.status, raised.exception.code), (502, None))

    def test_a_redirect_is_not_followed_so_the_key_goes_nowhere_else(self):
        client = self.client([(302, {"location": "/elsewhere"}, b""), OK])
        with self.assertRaises(PricepointError) as raised:
            client.usage()
        self.assertEqual(raised.exception.status, 302)
        self.assertEqual([path for path, _ in self.server.seen], ["/api/v1/usage"])

    def test_a_gzip_answer_is_read(self):
        status, headers, body = OK
        client = self.client([(status, {**headers, "content-encoding": "gzip"}, body)])
        self.assertEqual(client.usage().key_id, "k1")


if __name__ == "__main__":
    unittest.main()
