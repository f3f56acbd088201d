"""A month of two series from Pricepoint, as JSON and as CSV, into rows with aware timestamps.

Standard library only (Python 3.9+). Run:
  PRICEPOINT_URL=https://localhost:8443 PRICEPOINT_API_KEY=pp_demo_TryPricepointDemo2026x1pqsyk \\
  SSL_CERT_FILE=.pricepoint/tls/localhost-cert.pem python3 examples/prices.py
(SSL_CERT_FILE trusts the development server's own certificate; a server with a public one needs none.)
"""
import csv
import io
import json
import os
import urllib.parse
import urllib.request
from datetime import date, datetime, timedelta
from decimal import Decimal

BASE = os.environ.get("PRICEPOINT_URL", "https://localhost:8443")
KEY = os.environ["PRICEPOINT_API_KEY"]


def get(path, **query):
    """GET path?query with the key in its header (never in the URL); the body as text."""
    url = f"{BASE}{path}?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"x-api-key": KEY})
    with urllib.request.urlopen(request) as answer:
        return answer.read().decode("utf-8")


def rows_from_json(text):
    """(symbol, start, end, price) per interval: aware datetimes, exact Decimal prices."""
    answer = json.loads(text, parse_float=Decimal)
    for day in answer["series"]:
        for p in day["prices"]:
            start, end = datetime.fromisoformat(p["start"]), datetime.fromisoformat(p["end"])
            yield day["symbol"], start, end, Decimal(p["price"])


def rows_from_csv(text):
    """The same rows from the CSV answer (header: symbol,date,start,end,price,currency,unit)."""
    for r in csv.DictReader(io.StringIO(text)):
        yield r["symbol"], datetime.fromisoformat(r["start"]), datetime.fromisoformat(r["end"]), Decimal(r["price"])


if __name__ == "__main__":
    end = date.today()
    start = end - timedelta(days=30)
    query = {"symbols": "NO1,DE-LU", "from": start.isoformat(), "to": end.isoformat()}
    from_json = list(rows_from_json(get("/api/v1/prices", **query)))
    from_csv = list(rows_from_csv(get("/api/v1/prices", **query, format="csv")))
    assert from_json == from_csv, "JSON and CSV hold the same prices"
    for symbol in ("NO1", "DE-LU"):
        prices = [r for r in from_json if r[0] == symbol]
        cheapest = min(prices, key=lambda r: r[3])
        print(f"{symbol}: {len(prices)} intervals from {prices[0][1].isoformat()} to {prices[-1][2].isoformat()};"
              f" cheapest {cheapest[3]} at {cheapest[1].isoformat()}")
