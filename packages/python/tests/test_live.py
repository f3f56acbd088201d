"""Every method of the client against a live ``pricepoint serve --dev-data`` (test/client/python-client.test.ts
in the Pricepoint repository starts one and runs this file).

Settings, from the environment: PRICEPOINT_URL and PRICEPOINT_API_KEY (the demo key),
PRICEPOINT_TEST_CA_FILE (the server's certificate), PRICEPOINT_TEST_PRO_KEY (tier pro, scopes
read,write), PRICEPOINT_TEST_BURST_KEY (a tier of 1 request per 2 s), PRICEPOINT_TEST_DAILY_KEY (a
tier of 1 request a day). PRICEPOINT_TEST_REQUIRE_PANDAS=1 turns the pandas tests' skip into a
failure (CI). Without PRICEPOINT_URL the whole file is skipped.
"""

import json
import os
import re
import ssl
import unittest
import urllib.error
import urllib.request
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

from pricepoint import (
    InsufficientScopeError,
    InvalidApiKeyError,
    InvalidParameterError,
    OutsideTierHistoryError,
    PricepointClient,
    PricepointError,
    RateLimitedError,
    UnknownSeriesError,
)

URL = os.environ.get("PRICEPOINT_URL")
CA = os.environ.get("PRICEPOINT_TEST_CA_FILE")
LIVE = unittest.skipUnless(URL and CA, "no live server: set PRICEPOINT_URL and PRICEPOINT_TEST_CA_FILE")
OSLO = ZoneInfo("Europe/Oslo")

try:
    import pandas

    PANDAS = True
except ImportError:
    PANDAS = False


def client(key_variable="PRICEPOINT_API_KEY", **options):
    return PricepointClient(os.environ[key_variable], URL, ca_file=CA, **options)


def raw_json(path, key_variable="PRICEPOINT_API_KEY"):
    """The answer's text as the server sent it, read without the client."""
    request = urllib.request.Request(URL + path, headers={"x-api-key": os.environ[key_variable]})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=CA)) as answer:
        return answer.read().decode()


def oslo_today():
    return datetime.now(OSLO).date()


@LIVE
class Reads(unittest.TestCase):
    def test_today_is_each_series_own_local_day_with_aware_times_and_decimal_prices(self):
        answer = client().today(symbols=["NO1", "DE-LU"])
        self.assertEqual([s.symbol for s in answer.series], ["NO1", "DE-LU"])
        self.assertEqual(answer.generated_at.utcoffset(), timedelta(0))
        no1 = answer.series[0]
        self.assertEqual((no1.timezone, no1.resolution, no1.currency, no1.unit), ("Europe/Oslo", "PT15M", "EUR", "MWh"))
        self.assertEqual(no1.date, oslo_today())
        self.assertIn(len(no1.prices), (92, 96, 100))
        first = no1.prices[0]
        self.assertIsInstance(first.price, Decimal)
        self.assertIsNotNone(first.start.tzinfo)
        self.assertEqual(first.start.astimezone(OSLO).replace(tzinfo=None), datetime.combine(no1.date, datetime.min.time()))
        for a, b in zip(no1.prices, no1.prices[1:]):
            self.assertEqual(a.end, b.start)
            self.assertEqual(b.end - b.start, timedelta(minutes=15))

    def test_prices_are_exactly_the_digits_the_server_sent(self):
        text = raw_json("/api/v1/prices/yesterday?symbols=NO1")
        sent = re.findall(r'"price":(-?[0-9.]+)', text)
        read = [str(p.price) for p in client().day("yesterday", symbols="NO1").points("NO1")]
        self.assertEqual(read, sent)
        self.assertTrue(any(re.search(r"\.\d*0$", s) for s in sent), "a price with a trailing zero keeps it")

    def test_today_takes_tz_and_resolution(self):
        answer = client().today(symbols=["NO1"], tz="UTC", resolution="PT1H")
        day = answer.series[0]
        self.assertEqual(day.date, datetime.now(timezone.utc).date())
        self.assertEqual(day.resolution, "PT1H")
        self.assertEqual(len(day.prices), 24)
        self.assertEqual(day.prices[0].start.utcoffset(), timedelta(0))

    def test_day_by_date_and_by_name(self):
        c = client()
        yesterday = oslo_today() - timedelta(days=1)
        by_date = c.day(yesterday, symbols=["NO1"])
        by_text = c.day(yesterday.isoformat(), symbols=["NO1"])
        by_name = c.day("yesterday", symbols=["NO1"])
        self.assertEqual(by_date.series[0].date, yesterday)
        self.assertEqual(by_date.series, by_text.series)
        self.assertEqual(by_date.series, by_name.series)
        tomorrow = c.day("tomorrow", symbols=["NO1", "BTC-USD"])
        self.assertTrue(tomorrow.series[0].prices, "electricity has tomorrow's prices")
        self.assertEqual(tomorrow.series[1].prices, [], "a series with nothing published yet is there, empty")

    def test_range_of_a_few_days(self):
        end = oslo_today()
        answer = client().range(end - timedelta(days=6), end, symbols=["NO1", "EURUSD"])
        self.assertEqual([(s.symbol, s.date) for s in answer.series][:7], [("NO1", end - timedelta(days=6 - i)) for i in range(7)])
        self.assertEqual([s.symbol for s in answer.series].count("EURUSD"), 7)
        points = answer.points("NO1")
        self.assertEqual(points, sorted(points, key=lambda p: p.start))

    def test_latest_is_the_interval_that_contains_now(self):
        before = datetime.now(timezone.utc)
        answer = client().latest(symbols=["NO1", "BTC-USD"])
        after = datetime.now(timezone.utc)
        self.assertEqual([s.symbol for s in answer.series], ["NO1", "BTC-USD"])
        for entry in answer.series:
            self.assertEqual(len(entry.prices), 1)
            # The server's now lies between the two readings of the clock.
            self.assertTrue(entry.prices[0].start <= after and before < entry.prices[0].end, entry)

    def test_cheapest_window_and_cheapest_intervals(self):
        c = client()
        answer = c.cheapest(symbols=["NO1"], start="today", end="tomorrow", duration="PT3H")
        self.assertTrue(answer.contiguous)
        self.assertEqual(answer.duration, "PT3H")
        entry = answer.series[0]
        self.assertTrue(entry.complete)
        self.assertEqual(entry.missing, [])
        window = entry.cheapest
        self.assertEqual(window.end - window.start, timedelta(hours=3))
        self.assertEqual(len(window.prices), 12)
        self.assertIsInstance(window.mean, Decimal)
        mean = sum(p.price for p in window.prices) / 12
        self.assertLessEqual(abs(window.mean - mean), Decimal("0.005"))
        # The mean of every other 3-hour window of the two days is no lower.
        points = c.range("today", "tomorrow", symbols=["NO1"]).points("NO1")
        sums = [sum(p.price for p in points[i : i + 12]) for i in range(len(points) - 11)]
        self.assertEqual(min(sums), sum(p.price for p in window.prices))

        since = datetime.now(timezone.utc)
        four = c.cheapest(symbols="NO1", start=since, end="tomorrow", contiguous=False, count=4)
        self.assertEqual((four.contiguous, four.count), (False, 4))
        chosen = four.series[0].cheapest.prices
        self.assertEqual(len(chosen), 4)
        self.assertTrue(all(p.start >= since - timedelta(seconds=1) for p in chosen), chosen)

    def test_the_catalogue_and_one_series(self):
        c = client()
        catalogue = {s.symbol: s for s in c.series()}
        self.assertTrue({"NO1", "DE-LU", "EURUSD", "BTC-USD", "ACME"} <= set(catalogue))
        no1 = catalogue["NO1"]
        self.assertEqual(no1.coverage.last, oslo_today() + timedelta(days=1))
        self.assertLessEqual(no1.coverage.first, oslo_today() - timedelta(days=90))
        self.assertEqual(c.series_info("no1"), no1)
        self.assertEqual([s.symbol for s in c.series(symbols=["EURUSD", "NO1"])], ["EURUSD", "NO1"])

    def test_usage_and_the_rate_limit_headers(self):
        c = client()
        c.today(symbols="NO1")
        usage = c.usage()
        self.assertEqual((usage.tier, usage.history_days), ("demo", 31))
        self.assertIn(c.last_rate_limit.limit, [limit.limit for limit in usage.limits])
        self.assertLess(c.last_rate_limit.remaining, c.last_rate_limit.limit)
        self.assertTrue(all(limit.reset_at > datetime.now(timezone.utc) for limit in usage.limits))


@LIVE
class Problems(unittest.TestCase):
    def test_an_unknown_series_is_an_unknown_series_error_naming_it(self):
        with self.assertRaises(UnknownSeriesError) as raised:
            client().today(symbols=["NO1", "NOPE"])
        error = raised.exception
        self.assertIsInstance(error, PricepointError)
        self.assertEqual((error.status, error.code, error.title), (404, "unknown_series", "Unknown series"))
        self.assertEqual(error.symbols, ["NOPE"])
        self.assertIn("NOPE", error.detail)
        self.assertTrue(error.type.endswith("#problem-unknown_series"), error.type)
        self.assertEqual(error.instance, "/api/v1/prices/today")
        self.assertTrue(error.request_id)

    def test_a_malformed_value_names_its_parameter(self):
        with self.assertRaises(InvalidParameterError) as raised:
            client().today(resolution="PT7M")
        self.assertEqual((raised.exception.status, raised.exception.parameter), (400, "resolution"))

    def test_a_bad_key_and_history_and_scope(self):
        with self.assertRaises(InvalidApiKeyError) as raised:
            PricepointClient("pp_live_nosuchkey", URL, ca_file=CA).today()
        self.assertEqual(raised.exception.status, 401)
        self.assertNotIn("pp_live_nosuchkey", str(raised.exception))
        with self.assertRaises(OutsideTierHistoryError):
            client().day(date(2020, 1, 1), symbols=["NO1"])
        with self.assertRaises(InsufficientScopeError):
            client()._transport.get_json("/api/v1/keys", {})

    def test_the_certificate_is_checked(self):
        saved = os.environ.pop("SSL_CERT_FILE", None)
        try:
            with self.assertRaises(urllib.error.URLError) as raised:
                PricepointClient(os.environ["PRICEPOINT_API_KEY"], URL).usage()
            self.assertIsInstance(raised.exception.reason, ssl.SSLCertVerificationError)
        finally:
            if saved is not None:
                os.environ["SSL_CERT_FILE"] = saved


@LIVE
class RateLimits(unittest.TestCase):
    def test_a_429_is_waited_out_as_retry_after_says_and_the_call_succeeds(self):
        events = []
        c = client("PRICEPOINT_TEST_BURST_KEY", on_retry=events.append)
        # One request per 2 s window: of three calls in a row at least one meets a used-up window.
        answers = [c.series(symbols=["NO1"]) for _ in range(3)]
        self.assertEqual([a[0].symbol for a in answers], ["NO1"] * 3)
        self.assertTrue(events, "a 429 was met and waited out")
        for event in events:
            self.assertIsInstance(event.error, RateLimitedError)
            self.assertEqual(event.error.status, 429)
            self.assertGreaterEqual(event.error.retry_after, 1)
            self.assertEqual(event.delay, event.error.retry_after)

    def test_a_wait_longer_than_allowed_is_raised_at_once(self):
        events = []
        c = client("PRICEPOINT_TEST_DAILY_KEY", on_retry=events.append, max_retry_delay=60)
        try:
            c.series(symbols=["NO1"])  # the day's one request (taken already if this test ran before)
        except RateLimitedError:
            pass
        with self.assertRaises(RateLimitedError) as raised:
            c.series(symbols=["NO1"])
        error = raised.exception
        self.assertGreater(error.retry_after, 60)
        self.assertEqual(error.violated_policies, ["day"])
        self.assertEqual(events, [])
        self.assertEqual(c.last_rate_limit.remaining, 0)


@LIVE
class LongRanges(unittest.TestCase):
    """A range past 366 days is read in several requests and joined: each day once, in order."""

    @classmethod
    def setUpClass(cls):
        # Four quarter hours of NO1 on a day the development data set does not reach, so the first
        # request of the range has data too.
        cls.old_day = oslo_today() - timedelta(days=395)
        midnight = datetime.combine(cls.old_day, datetime.min.time(), OSLO)
        cls.uploaded = ["12.340", "-1.5", "0", "7.25"]
        # The prices written as JSON numbers with exactly these digits.
        body = "[" + ",".join(
            f'{{"start":"{(midnight + timedelta(minutes=15 * i)).isoformat()}","price":{p}}}'
            for i, p in enumerate(cls.uploaded)
        ) + "]"
        request = urllib.request.Request(
            URL + "/api/v1/series/NO1/prices",
            data=body.encode(),
            method="PUT",
            headers={"x-api-key": os.environ["PRICEPOINT_TEST_PRO_KEY"], "content-type": "application/json"},
        )
        with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=CA)) as answer:
            assert json.load(answer)["written"] == 4

    def check(self, answer, first, last):
        days = [s.date for s in answer.series]
        self.assertEqual(days, [first + timedelta(days=i) for i in range((last - first).days + 1)])
        self.assertEqual({s.symbol for s in answer.series}, {"NO1"})
        old = next(s for s in answer.series if s.date == self.old_day)
        self.assertEqual([str(p.price) for p in old.prices], self.uploaded)
        self.assertGreaterEqual(sum(1 for s in answer.series if len(s.prices) >= 92), 90)

    def test_400_days_of_dates(self):
        first, last = self.old_day - timedelta(days=5), oslo_today()
        self.assertGreater((last - first).days + 1, 366)
        self.check(client("PRICEPOINT_TEST_PRO_KEY").range(first, last, symbols=["NO1"]), first, last)

    def test_from_a_date_to_tomorrow(self):
        first = self.old_day
        answer = client("PRICEPOINT_TEST_PRO_KEY").range(first, "tomorrow", symbols=["NO1"])
        self.check(answer, first, oslo_today() + timedelta(days=1))
        self.assertEqual(len(answer.series[-1].prices) in (92, 96, 100), True, "tomorrow's prices are there")

    def test_without_splitting_the_server_refuses_it(self):
        c = client("PRICEPOINT_TEST_PRO_KEY")
        with self.assertRaises(InvalidParameterError):
            c._transport.get_json(
                "/api/v1/prices",
                {"symbols": "NO1", "from": (self.old_day - timedelta(days=5)).isoformat(), "to": oslo_today().isoformat()},
            )


@LIVE
class Pandas(unittest.TestCase):
    def setUp(self):
        if not PANDAS:
            if os.environ.get("PRICEPOINT_TEST_REQUIRE_PANDAS") == "1":
                self.fail("pandas is not installed, and this run requires it (apt-get install python3-pandas)")
            self.skipTest("pandas is not installed")

    def test_to_pandas_has_aware_timestamps_and_decimal_prices(self):
        answer = client().range("yesterday", "tomorrow", symbols=["NO1", "DE-LU"])
        frame = answer.to_pandas()
        self.assertEqual(list(frame.columns), ["symbol", "date", "start", "end", "price", "currency", "unit"])
        self.assertEqual(len(frame), len(answer.points("NO1")) + len(answer.points("DE-LU")))
        self.assertEqual(str(frame["start"].dt.tz), "UTC")
        self.assertEqual(frame["price"].dtype, object)
        first = answer.points("NO1")[0]
        self.assertEqual(frame["price"].iloc[0], first.price)
        self.assertIsInstance(frame["price"].iloc[0], Decimal)
        self.assertEqual(frame["start"].iloc[0].to_pydatetime(), first.start)

    def test_to_pandas_with_float_prices_in_a_zone(self):
        answer = client().day("today", symbols=["NO1"])
        frame = answer.to_pandas(prices="float", tz="Europe/Oslo")
        self.assertEqual(str(frame["price"].dtype), "float64")
        self.assertEqual(str(frame["start"].dt.tz), "Europe/Oslo")
        self.assertEqual(frame["start"].iloc[0].hour, 0)
        self.assertAlmostEqual(frame["price"].sum(), float(sum(p.price for p in answer.points("NO1"))), places=6)
        self.assertIsInstance(pandas.Timestamp(frame["end"].iloc[-1]), pandas.Timestamp)


if __name__ == "__main__":
    unittest.main()
