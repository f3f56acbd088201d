"""A month of two series, the cheapest three hours and an error, with Pricepoint's Python client.

Python 3.9+, the client from packages/python (docs/python.md). From the repository folder, without
installing it:
  PYTHONPATH=packages/python/src PRICEPOINT_URL=https://localhost:8443 \\
  PRICEPOINT_API_KEY=pp_demo_TryPricepointDemo2026x1pqsyk \\
  SSL_CERT_FILE=.pricepoint/tls/localhost-cert.pem python3 examples/prices.py
(SSL_CERT_FILE trusts the development server's own certificate; a server with a public one needs none.)
"""
from datetime import date, timedelta

from pricepoint import PricepointClient, UnknownSeriesError

client = PricepointClient()  # the key from PRICEPOINT_API_KEY, the server from PRICEPOINT_URL

# The last 31 days of two series: aware datetimes (the offset of each instant) and exact Decimals.
end = date.today()
month = client.range(end - timedelta(days=30), end, symbols=["NO1", "DE-LU"])
for symbol in ("NO1", "DE-LU"):
    points = month.points(symbol)
    cheapest = min(points, key=lambda p: p.price)
    print(f"{symbol}: {len(points)} intervals from {points[0].start.isoformat()} to {points[-1].end.isoformat()};"
          f" cheapest {cheapest.price} at {cheapest.start.isoformat()}")

# The cheapest three hours of today and tomorrow (None while too little is published).
window = client.cheapest(symbols=["NO1"], start="today", end="tomorrow", duration="PT3H").series[0].cheapest
if window is not None:
    print(f"NO1: cheapest 3 hours from {window.start.isoformat()} to {window.end.isoformat()}, mean {window.mean}")

# Every error answer is an exception of its problem code, with the problem's members.
try:
    client.today(symbols=["NO1", "NOPE"])
except UnknownSeriesError as error:
    print(f"{error.status} {error.code}: {error.detail} {error.symbols}")
