"""``Prices.to_pandas()``: imported only when called, so the client itself needs nothing beyond the
standard library."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from .models import Prices

COLUMNS = ("symbol", "date", "start", "end", "price", "currency", "unit")


def prices_frame(answer: Prices, *, prices: str, tz: Optional[str]) -> pandas.DataFrame:
    if prices not in ("decimal", "float"):
        raise ValueError(f'prices must be "decimal" or "float", not {prices!r}')
    try:
        import pandas as pd
    except ImportError as error:  # pragma: no cover - depends on the machine
        raise ImportError(
            "to_pandas() needs pandas: pip install pandas (or apt-get install python3-pandas)"
        ) from error
    rows: Dict[str, List[Any]] = {name: [] for name in COLUMNS}
    for day in answer.series:
        for point in day.prices:
            rows["symbol"].append(day.symbol)
            rows["date"].append(day.date)
            rows["start"].append(point.start)
            rows["end"].append(point.end)
            rows["price"].append(point.price if prices == "decimal" else float(point.price))
            rows["currency"].append(day.currency)
            rows["unit"].append(day.unit)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["price"] = frame["price"].astype("float64" if prices == "float" else "object")
    if tz is not None:
        # Offsets differ across a DST change, so the instants go through UTC into one zone's column.
        for column in ("start", "end"):
            frame[column] = pd.to_datetime(frame[column], utc=True).dt.tz_convert(tz)
    return frame
