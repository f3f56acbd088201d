"""``PricepointClient``: one typed method per read endpoint of the Pricepoint API, version 1
(docs/using-the-api.md in the Pricepoint repository)."""

from __future__ import annotations

import os
import urllib.parse
from datetime import date, datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union

from ._days import DayInput, day_text, range_requests
from ._http import RetryEvent, Transport
from .models import Cheapest, Prices, RateLimit, SeriesDay, SeriesInfo, Usage, parse_instant

__version__ = "0.1.0"

DEFAULT_URL = "https://localhost:8443"
Symbols = Union[str, Iterable[str]]
Instant = Union[datetime, date, str]


class PricepointClient:
    """A client for the Pricepoint API. The key and the server come from the arguments, else from
    ``PRICEPOINT_API_KEY`` and ``PRICEPOINT_URL`` (default ``https://localhost:8443``).

    Prices are ``Decimal`` and timestamps aware ``datetime``; an error answer raises the
    ``PricepointError`` subclass of its code; a 429 is waited out as ``Retry-After`` says when
    that is at most ``max_retry_delay`` seconds (``max_retries`` times at most).

    >>> client = PricepointClient(ca_file=".pricepoint/tls/localhost-cert.pem")  # doctest: +SKIP
    >>> client.today(symbols=["NO1"]).series[0].prices[0].price  # doctest: +SKIP
    Decimal('41.27')
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        ca_file: Optional[str] = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_retry_delay: float = 60.0,
        retry_base_delay: float = 0.5,
        on_retry: Optional[Callable[[RetryEvent], None]] = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("PRICEPOINT_API_KEY")
        if not key:
            raise ValueError("no API key: pass api_key or set PRICEPOINT_API_KEY")
        url = base_url if base_url is not None else os.environ.get("PRICEPOINT_URL") or DEFAULT_URL
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must be an http(s) URL, not {url!r}")
        self._transport = Transport(
            base_url=url,
            api_key=key,
            ca_file=ca_file,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_delay=max_retry_delay,
            retry_base_delay=retry_base_delay,
            on_retry=on_retry,
            user_agent=f"pricepoint-python/{__version__}",
        )

    def __repr__(self) -> str:
        # Never the key: a repr ends up in logs and tracebacks.
        return f"PricepointClient(base_url={self._transport.base_url!r})"

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def last_rate_limit(self) -> Optional[RateLimit]:
        """The rate-limit headers of the last answer that had them, error answers included."""
        return self._transport.last_rate_limit

    def today(
        self,
        *,
        symbols: Optional[Symbols] = None,
        tz: Optional[str] = None,
        resolution: Optional[str] = None,
        currency: Optional[str] = None,
        unit: Optional[str] = None,
        tariff: Optional[str] = None,
        include: Optional[Iterable[str]] = None,
    ) -> Prices:
        """``GET /api/v1/prices/today``: today's prices of every series the key reads, or of ``symbols``.

        "Today" is each series' own local day, or the day in ``tz`` for all of them.
        """
        query = _read_query(symbols, tz, resolution, currency, unit, tariff, include)
        return Prices.from_json(self._transport.get_json("/api/v1/prices/today", query))

    def day(
        self,
        day: DayInput,
        *,
        symbols: Optional[Symbols] = None,
        tz: Optional[str] = None,
        resolution: Optional[str] = None,
        currency: Optional[str] = None,
        unit: Optional[str] = None,
        tariff: Optional[str] = None,
        include: Optional[Iterable[str]] = None,
    ) -> Prices:
        """``GET /api/v1/prices/{day}``: one day, a ``date``, ``YYYY-MM-DD`` or ``today``,
        ``tomorrow``, ``yesterday``."""
        query = _read_query(symbols, tz, resolution, currency, unit, tariff, include)
        path = "/api/v1/prices/" + urllib.parse.quote(day_text(day), safe="")
        return Prices.from_json(self._transport.get_json(path, query))

    def range(
        self,
        start: DayInput,
        end: DayInput,
        *,
        symbols: Optional[Symbols] = None,
        tz: Optional[str] = None,
        resolution: Optional[str] = None,
        currency: Optional[str] = None,
        unit: Optional[str] = None,
        tariff: Optional[str] = None,
        include: Optional[Iterable[str]] = None,
    ) -> Prices:
        """``GET /api/v1/prices?from&to``: the days ``start`` to ``end``, both inclusive, one entry
        per series and day, ordered by series, then date.

        The server answers at most 366 days at a time; a longer range is read in several requests
        (each counted against the rate limit) and joined into one answer.
        """
        query = _read_query(symbols, tz, resolution, currency, unit, tariff, include)
        answers = [
            Prices.from_json(self._transport.get_json("/api/v1/prices", {**query, "from": a, "to": b}))
            for a, b in range_requests(start, end)
        ]
        if len(answers) == 1:
            return answers[0]
        by_symbol: Dict[str, List[SeriesDay]] = {}
        for answer in answers:  # in date order, so each series' days stay in date order
            for entry in answer.series:
                by_symbol.setdefault(entry.symbol, []).append(entry)
        return Prices(
            generated_at=max(a.generated_at for a in answers),
            series=[entry for entries in by_symbol.values() for entry in entries],
        )

    def latest(
        self,
        *,
        symbols: Optional[Symbols] = None,
        tz: Optional[str] = None,
        resolution: Optional[str] = None,
        currency: Optional[str] = None,
        unit: Optional[str] = None,
        tariff: Optional[str] = None,
    ) -> Prices:
        """``GET /api/v1/prices/latest``: per series, the interval that contains now, or else the
        last one before now (a series with none within the tier's history has no entry)."""
        query = _read_query(symbols, tz, resolution, currency, unit, tariff, None)
        return Prices.from_json(self._transport.get_json("/api/v1/prices/latest", query))

    def cheapest(
        self,
        *,
        symbols: Symbols,
        start: Instant,
        end: Instant,
        duration: Optional[str] = None,
        count: Optional[int] = None,
        contiguous: Optional[bool] = None,
        tz: Optional[str] = None,
        currency: Optional[str] = None,
        unit: Optional[str] = None,
        tariff: Optional[str] = None,
    ) -> Cheapest:
        """``GET /api/v1/prices/cheapest``: per series, the cheapest window of ``duration`` (an ISO
        8601 duration such as ``PT3H``) between ``start`` and ``end``, or with
        ``contiguous=False`` the ``count`` cheapest intervals (docs/api.md "The cheapest hours").

        ``start`` and ``end`` are aware datetimes, days (``date``, ``YYYY-MM-DD``, day names:
        ``end`` inclusive), RFC 3339 text or ``now``. Only published prices count: ``complete``
        and ``missing`` say what is not published yet.
        """
        query = _read_query(symbols, tz, None, currency, unit, tariff, None)
        query["from"] = _instant_text(start)
        query["to"] = _instant_text(end)
        if duration is not None:
            query["duration"] = duration
        if count is not None:
            query["count"] = str(count)
        if contiguous is not None:
            query["contiguous"] = "true" if contiguous else "false"
        return Cheapest.from_json(self._transport.get_json("/api/v1/prices/cheapest", query))

    def series(self, *, symbols: Optional[Symbols] = None) -> List[SeriesInfo]:
        """``GET /api/v1/series``: the catalogue of the series the key reads, with their coverage."""
        answer = self._transport.get_json("/api/v1/series", _read_query(symbols, None, None, None, None, None, None))
        return [SeriesInfo.from_json(s) for s in answer["series"]]

    def series_info(self, symbol: str) -> SeriesInfo:
        """``GET /api/v1/series/{symbol}``: one series' metadata and coverage (any letter case)."""
        path = "/api/v1/series/" + urllib.parse.quote(symbol, safe="")
        return SeriesInfo.from_json(self._transport.get_json(path, {}))

    def usage(self) -> Usage:
        """``GET /api/v1/usage``: the key's tier, its limits and what is left; not counted."""
        return Usage.from_json(self._transport.get_json("/api/v1/usage", {}))


def _symbols_text(symbols: Symbols) -> str:
    return symbols if isinstance(symbols, str) else ",".join(symbols)


def _read_query(
    symbols: Optional[Symbols],
    tz: Optional[str],
    resolution: Optional[str],
    currency: Optional[str],
    unit: Optional[str],
    tariff: Optional[str],
    include: Optional[Iterable[str]],
) -> Dict[str, str]:
    given: Mapping[str, Any] = {
        "symbols": None if symbols is None else _symbols_text(symbols),
        "tz": tz,
        "resolution": resolution,
        "currency": currency,
        "unit": unit,
        "tariff": tariff,
        "include": None if include is None else ",".join(include),
    }
    return {name: value for name, value in given.items() if value is not None}


def _instant_text(value: Instant) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("a naive datetime names no instant: give it a tzinfo")
        return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return value


__all__ = ["PricepointClient"]
