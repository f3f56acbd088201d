"""The answers of the API as typed, immutable objects: aware datetimes and exact Decimal prices.

Timestamps carry the offset the server wrote (in force at that instant in the day's zone), so the
two 02:00 of an autumn DST day stay two different instants. Prices are parsed from the JSON text
straight into ``Decimal``: ``41.27`` is ``Decimal('41.27')``, never ``41.270000000000003``. Members
this version of the client does not name are kept in ``extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import pandas


def parse_instant(text: str) -> datetime:
    """An RFC 3339 timestamp as an aware datetime (``Z`` included, which Python 3.9 does not read)."""
    value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    if value.tzinfo is None:
        raise ValueError(f"timestamp without an offset: {text}")
    return value


def _decimal(value: Any) -> Decimal:
    # JSON floats arrive as Decimal already (parse_float); integers as int.
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _optional_decimal(value: Any) -> Optional[Decimal]:
    return None if value is None else _decimal(value)


def _optional_date(value: Any) -> Optional[date]:
    return date.fromisoformat(value) if isinstance(value, str) else None


def _rest(raw: Mapping[str, Any], known: Tuple[str, ...]) -> Dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in known}


@dataclass(frozen=True)
class FxRate:
    """The FX rate a converted price was computed with (``currency=...``)."""

    symbol: str
    date: date
    rate: Decimal

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FxRate:
        return cls(symbol=raw["symbol"], date=date.fromisoformat(raw["date"]), rate=_decimal(raw["rate"]))


def _optional_fx(raw: Any) -> Optional[FxRate]:
    return FxRate.from_json(raw) if isinstance(raw, Mapping) else None


_POINT_KEYS = ("start", "end", "price", "fx", "total", "spot", "fees", "vat", "rank", "level")


@dataclass(frozen=True)
class PricePoint:
    """One interval: ``start`` inclusive, ``end`` exclusive, and its price.

    ``total``, ``spot``, ``fees`` and ``vat`` are set with ``tariff=...``; ``rank`` and ``level``
    with ``include=["rank"]``; ``fx`` with ``currency=...`` where the intervals of a day used
    different rates.
    """

    start: datetime
    end: datetime
    price: Decimal
    fx: Optional[FxRate] = None
    total: Optional[Decimal] = None
    spot: Optional[Decimal] = None
    fees: Optional[Decimal] = None
    vat: Optional[Decimal] = None
    rank: Optional[int] = None
    level: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> PricePoint:
        return cls(
            start=parse_instant(raw["start"]),
            end=parse_instant(raw["end"]),
            price=_decimal(raw["price"]),
            fx=_optional_fx(raw.get("fx")),
            total=_optional_decimal(raw.get("total")),
            spot=_optional_decimal(raw.get("spot")),
            fees=_optional_decimal(raw.get("fees")),
            vat=_optional_decimal(raw.get("vat")),
            rank=raw.get("rank"),
            level=raw.get("level"),
            extra=_rest(raw, _POINT_KEYS),
        )


_META_KEYS = ("symbol", "name", "kind", "currency", "unit", "timezone", "resolution")
_DAY_KEYS = _META_KEYS + ("date", "complete", "source", "tariff", "fx", "prices")


@dataclass(frozen=True)
class SeriesDay:
    """One local day of one series, with the series' metadata; ``prices`` is empty when nothing is
    published for the day yet (tomorrow before the auction), which is no error."""

    symbol: str
    name: str
    kind: str
    currency: str
    unit: str
    timezone: str
    resolution: str
    date: date
    prices: List[PricePoint]
    complete: Optional[bool] = None
    source: Optional[str] = None
    tariff: Optional[str] = None
    fx: Optional[FxRate] = None
    extra: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> SeriesDay:
        return cls(
            symbol=raw["symbol"],
            name=raw["name"],
            kind=raw["kind"],
            currency=raw["currency"],
            unit=raw["unit"],
            timezone=raw["timezone"],
            resolution=raw["resolution"],
            date=date.fromisoformat(raw["date"]),
            prices=[PricePoint.from_json(p) for p in raw["prices"]],
            complete=raw.get("complete"),
            source=raw.get("source"),
            tariff=raw.get("tariff"),
            fx=_optional_fx(raw.get("fx")),
            extra=_rest(raw, _DAY_KEYS),
        )


@dataclass(frozen=True)
class Prices:
    """The answer of ``today``, ``day``, ``range`` and ``latest``: one entry per series and day,
    ordered by series, then date (``latest``: one per series, holding the one current interval)."""

    generated_at: datetime
    series: List[SeriesDay]

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Prices:
        return cls(
            generated_at=parse_instant(raw["generatedAt"]),
            series=[SeriesDay.from_json(s) for s in raw["series"]],
        )

    def points(self, symbol: str) -> List[PricePoint]:
        """Every interval of one series, in time order, across the days of the answer."""
        wanted = symbol.upper()
        return [p for day in self.series if day.symbol.upper() == wanted for p in day.prices]

    def to_pandas(self, *, prices: str = "decimal", tz: Optional[str] = "UTC") -> pandas.DataFrame:
        """One row per interval: ``symbol, date, start, end, price, currency, unit`` (needs pandas).

        ``start`` and ``end`` are tz-aware (UTC, or the zone ``tz`` names; ``tz=None`` keeps each
        timestamp's own offset in an object column). ``prices="decimal"`` (the default) keeps exact
        ``Decimal`` objects, ``prices="float"`` gives a float64 column for arithmetic at speed.
        """
        from ._pandas import prices_frame

        return prices_frame(self, prices=prices, tz=tz)


@dataclass(frozen=True)
class Coverage:
    """The first and last local dates a series has prices for."""

    first: date
    last: date


_INFO_KEYS = _META_KEYS + ("coverage",)


@dataclass(frozen=True)
class SeriesInfo:
    """A series of the catalogue; ``coverage`` is ``None`` while it has no prices."""

    symbol: str
    name: str
    kind: str
    currency: str
    unit: str
    timezone: str
    resolution: str
    coverage: Optional[Coverage]
    extra: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> SeriesInfo:
        coverage = raw.get("coverage")
        return cls(
            symbol=raw["symbol"],
            name=raw["name"],
            kind=raw["kind"],
            currency=raw["currency"],
            unit=raw["unit"],
            timezone=raw["timezone"],
            resolution=raw["resolution"],
            coverage=Coverage(date.fromisoformat(coverage["first"]), date.fromisoformat(coverage["last"]))
            if isinstance(coverage, Mapping)
            else None,
            extra=_rest(raw, _INFO_KEYS),
        )


@dataclass(frozen=True)
class Span:
    """A span of time, ``start`` inclusive and ``end`` exclusive."""

    start: datetime
    end: datetime


@dataclass(frozen=True)
class Window:
    """The cheapest window (or the ``count`` cheapest intervals): its bounds, exact mean and intervals."""

    start: datetime
    end: datetime
    mean: Decimal
    prices: List[PricePoint]


_CHEAPEST_KEYS = _META_KEYS + ("tariff", "from", "to", "complete", "missing", "cheapest")


@dataclass(frozen=True)
class CheapestSeries:
    """Per series: the range searched, what is not published yet in it, and the cheapest window
    among the published intervals (``None`` when no window fits yet: the caller decides to wait)."""

    symbol: str
    name: str
    kind: str
    currency: str
    unit: str
    timezone: str
    resolution: str
    from_: datetime
    to: datetime
    complete: bool
    missing: List[Span]
    cheapest: Optional[Window]
    tariff: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> CheapestSeries:
        window = raw.get("cheapest")
        return cls(
            symbol=raw["symbol"],
            name=raw["name"],
            kind=raw["kind"],
            currency=raw["currency"],
            unit=raw["unit"],
            timezone=raw["timezone"],
            resolution=raw["resolution"],
            from_=parse_instant(raw["from"]),
            to=parse_instant(raw["to"]),
            complete=bool(raw["complete"]),
            missing=[Span(parse_instant(m["start"]), parse_instant(m["end"])) for m in raw.get("missing", [])],
            cheapest=Window(
                start=parse_instant(window["start"]),
                end=parse_instant(window["end"]),
                mean=_decimal(window["mean"]),
                prices=[PricePoint.from_json(p) for p in window["prices"]],
            )
            if isinstance(window, Mapping)
            else None,
            tariff=raw.get("tariff"),
            extra=_rest(raw, _CHEAPEST_KEYS),
        )


@dataclass(frozen=True)
class Cheapest:
    """The answer of ``cheapest``: ``duration`` for a contiguous window, ``count`` otherwise."""

    generated_at: datetime
    contiguous: bool
    series: List[CheapestSeries]
    duration: Optional[str] = None
    count: Optional[int] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Cheapest:
        return cls(
            generated_at=parse_instant(raw["generatedAt"]),
            contiguous=bool(raw["contiguous"]),
            series=[CheapestSeries.from_json(s) for s in raw["series"]],
            duration=raw.get("duration"),
            count=raw.get("count"),
        )


@dataclass(frozen=True)
class UsageLimit:
    """One limit of the key's tier and what is left of it in the current window."""

    name: str
    limit: int
    window_seconds: int
    remaining: int
    reset_at: datetime


@dataclass(frozen=True)
class Usage:
    """The calling key's tier, its limits and what is left (``GET /api/v1/usage``, not counted)."""

    key_id: str
    tier: str
    limits: List[UsageLimit]
    kinds: Optional[List[str]]
    history_days: Optional[int]

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Usage:
        return cls(
            key_id=raw["keyId"],
            tier=raw["tier"],
            limits=[
                UsageLimit(
                    name=limit["name"],
                    limit=int(limit["limit"]),
                    window_seconds=int(limit["windowSeconds"]),
                    remaining=int(limit["remaining"]),
                    reset_at=parse_instant(limit["resetAt"]),
                )
                for limit in raw["limits"]
            ],
            kinds=raw.get("kinds"),
            history_days=raw.get("historyDays"),
        )


@dataclass(frozen=True)
class RateLimit:
    """The rate-limit headers of an answer: the limit closest to running out."""

    limit: int
    remaining: int
    reset: int
    """Unix epoch seconds when that limit's window resets."""
