"""GET with the key in a header, JSON parsed exactly, error answers raised as typed exceptions, and
the retry policy: a 429 waits as ``Retry-After`` says, 502/503/504 back off with full jitter, both
bounded by ``max_retries`` and ``max_retry_delay`` (README.md "Retries")."""

from __future__ import annotations

import gzip
import json
import random
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from decimal import Decimal
from email.message import Message
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Mapping, Optional

from .errors import PricepointError, error_for
from .models import RateLimit

RETRIED_STATUSES = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class RetryEvent:
    """Told to ``on_retry`` before each wait: the retry's number (1 for the first), the seconds
    about to be waited, and the error answer that caused it."""

    retry: int
    delay: float
    error: PricepointError


def retry_after_seconds(value: Optional[str], now: float) -> Optional[int]:
    """``Retry-After`` in whole seconds: delay-seconds or an HTTP date; ``None`` when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return int(text)
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if at is None or at.tzinfo is None:
        return None
    return max(0, int(-(-(at.timestamp() - now) // 1)))


def rate_limit_of(headers: Message) -> Optional[RateLimit]:
    try:
        return RateLimit(
            limit=int(headers["x-ratelimit-limit"]),
            remaining=int(headers["x-ratelimit-remaining"]),
            reset=int(headers["x-ratelimit-reset"]),
        )
    except (TypeError, ValueError):
        return None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuses to follow redirects: urllib would send the key's header along to wherever they
    point. A 3xx is raised as a ``PricepointError`` with its status instead."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Transport:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        ca_file: Optional[str],
        timeout: float,
        max_retries: int,
        max_retry_delay: float,
        retry_base_delay: float,
        on_retry: Optional[Callable[[RetryEvent], None]],
        user_agent: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        # With ca_file only that certificate is trusted; without it the system's store, which
        # OpenSSL reads from SSL_CERT_FILE when that is set.
        context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
        self._opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _NoRedirects)
        self._timeout = timeout
        self._max_retries = max(0, max_retries)
        self._max_retry_delay = max_retry_delay
        self._retry_base_delay = retry_base_delay
        self._on_retry = on_retry
        self._user_agent = user_agent
        self._sleep = sleep
        self.last_rate_limit: Optional[RateLimit] = None

    def get_json(self, path: str, query: Mapping[str, str]) -> Any:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query, safe=",:")
        retry = 0
        while True:
            try:
                return self._once(url)
            except PricepointError as error:
                delay = self._delay(error, retry)
                if delay is None:
                    raise
                retry += 1
                if self._on_retry is not None:
                    self._on_retry(RetryEvent(retry=retry, delay=delay, error=error))
                self._sleep(delay)

    def _delay(self, error: PricepointError, retry: int) -> Optional[float]:
        """Seconds to wait before the next attempt, or ``None`` to raise ``error`` now."""
        if error.status not in RETRIED_STATUSES or retry >= self._max_retries:
            return None
        if error.retry_after is not None:
            # Waiting less than the server said cannot succeed; waiting longer than the caller
            # allows (a day limit used up) is the caller's decision, so raise with retry_after.
            return float(max(error.retry_after, 0)) if error.retry_after <= self._max_retry_delay else None
        return random.uniform(0, min(self._max_retry_delay, self._retry_base_delay * 2**retry))

    def _once(self, url: str) -> Any:
        request = urllib.request.Request(
            url,
            headers={
                "x-api-key": self._api_key,  # a header, never the URL: URLs end up in logs
                "accept": "application/json",
                "accept-encoding": "gzip",
                "user-agent": self._user_agent,
            },
        )
        try:
            with self._opener.open(request, timeout=self._timeout) as answer:
                self._note(answer.headers)
                return _parse(_body(answer.read(), answer.headers))
        except urllib.error.HTTPError as answer:
            with answer:
                self._note(answer.headers)
                raise self._error(answer.code, _body(answer.read(), answer.headers), answer.headers) from None

    def _note(self, headers: Message) -> None:
        limits = rate_limit_of(headers)
        if limits is not None:
            self.last_rate_limit = limits

    @staticmethod
    def _error(status: int, body: bytes, headers: Message) -> PricepointError:
        problem: Any = None
        try:
            problem = _parse(body)
        except ValueError:
            pass
        if not isinstance(problem, dict):
            # Not a problem body (a proxy's HTML page): the status alone, as the problem's title.
            problem = {"title": f"HTTP {status}", "status": status}
        return error_for(
            status,
            problem,
            request_id=headers.get("x-request-id"),
            retry_after=retry_after_seconds(headers.get("retry-after"), time.time()),
        )


def _body(raw: bytes, headers: Message) -> bytes:
    return gzip.decompress(raw) if (headers.get("content-encoding") or "").lower() == "gzip" else raw


def _parse(body: bytes) -> Any:
    # Every JSON number with a fraction or exponent becomes a Decimal of exactly the digits sent.
    return json.loads(body.decode("utf-8"), parse_float=Decimal)
