"""Splitting a range of days into requests the server takes: ``GET /api/v1/prices`` answers at most
366 days, both ends inclusive (docs/using-the-api.md "Reading prices").

A day name (``today``, ``tomorrow``, ``yesterday``) means a date in the zone the series is read in,
which the client does not know; it lies within a day of the same name in UTC. So a name is kept in
the one request at its end of the range, and that request is made short enough to stay within the
limit whichever date the name turns out to mean. Every other request has two dates, and together
they cover each day once.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import List, Optional, Tuple, Union

DayInput = Union[date, str]
MAX_RANGE_DAYS = 366
DAY_NAMES = {"yesterday": -1, "today": 0, "tomorrow": 1}


def day_text(value: DayInput) -> str:
    """What the API takes for a day: ``YYYY-MM-DD`` or a day name, as given."""
    if isinstance(value, datetime):
        raise TypeError("a day is a date or text, not a datetime: pass value.date()")
    return value.isoformat() if isinstance(value, date) else value


def _resolve(value: DayInput, today_utc: date) -> Optional[Tuple[date, bool]]:
    """The date meant and whether it is exact; ``None`` for text the server must judge."""
    if isinstance(value, date):
        return value, True
    offset = DAY_NAMES.get(value.strip().lower())
    if offset is not None:
        return today_utc + timedelta(days=offset), False
    try:
        return date.fromisoformat(value), True
    except ValueError:
        return None


def range_requests(
    start: DayInput, end: DayInput, *, max_days: int = MAX_RANGE_DAYS, today_utc: Optional[date] = None
) -> List[Tuple[str, str]]:
    """The ``(from, to)`` pairs that read ``start`` to ``end``, in date order.

    >>> range_requests(date(2024, 1, 1), date(2025, 12, 31))
    [('2024-01-01', '2024-12-31'), ('2025-01-01', '2025-12-31')]
    """
    first, last = day_text(start), day_text(end)
    today = today_utc or datetime.now(timezone.utc).date()
    a, b = _resolve(start, today), _resolve(end, today)
    if a is None or b is None or b[0] < a[0] or (not a[1] and not b[1]):
        return [(first, last)]  # one request: the server answers it, or says what is wrong with it
    (lo, lo_exact), (hi, hi_exact) = a, b
    # A name may mean the day before or after its UTC date: one day of margin for it.
    if (hi - lo).days + 1 <= (max_days if lo_exact and hi_exact else max_days - 1):
        return [(first, last)]
    requests: List[Tuple[str, str]] = []
    if not lo_exact:
        # [name, lo + max - 2] spans at most max days when the name means lo - 1.
        cut = lo + timedelta(days=max_days - 2)
        requests.append((first, cut.isoformat()))
        lo = cut + timedelta(days=1)
    # The last request [hi + 2 - max, name] spans at most max days when the name means hi + 1.
    stop = hi if hi_exact else hi + timedelta(days=1 - max_days)
    while lo <= stop:
        to = min(lo + timedelta(days=max_days - 1), stop)
        requests.append((lo.isoformat(), to.isoformat()))
        lo = to + timedelta(days=1)
    if not hi_exact:
        requests.append((lo.isoformat(), last))
    return requests
