"""How a range of days is split into requests of at most 366 days: every day once, in order."""

import unittest
from datetime import date, timedelta

from pricepoint import range_requests

TODAY = date(2026, 11, 28)


def days_of(requests, name_means):
    """The dates the requests read, with each day name meaning the date `name_means` gives."""
    days = []
    for a, b in requests:
        lo = name_means.get(a) or date.fromisoformat(a)
        hi = name_means.get(b) or date.fromisoformat(b)
        assert (hi - lo).days + 1 <= 366, f"{a}..{b} spans {(hi - lo).days + 1} days"
        days.extend(lo + timedelta(days=i) for i in range((hi - lo).days + 1))
    return days


class RangeRequests(unittest.TestCase):
    def test_up_to_366_days_is_one_request_as_given(self):
        self.assertEqual(range_requests(date(2024, 1, 1), date(2024, 12, 31)), [("2024-01-01", "2024-12-31")])
        self.assertEqual(range_requests("2025-01-01", "2025-01-31"), [("2025-01-01", "2025-01-31")])
        self.assertEqual(range_requests("yesterday", "tomorrow", today_utc=TODAY), [("yesterday", "tomorrow")])

    def test_a_long_range_of_dates_is_cut_into_366_day_requests_covering_each_day_once(self):
        start, end = date(2020, 2, 29), date(2026, 11, 28)
        requests = range_requests(start, end)
        self.assertEqual(requests[0], ("2020-02-29", "2021-02-28"))
        self.assertEqual(requests[1][0], "2021-03-01")
        days = days_of(requests, {})
        self.assertEqual(days, [start + timedelta(days=i) for i in range((end - start).days + 1)])
        self.assertEqual(len(requests), -(-len(days) // 366))

    def test_367_days_are_two_requests(self):
        requests = range_requests(date(2025, 1, 1), date(2026, 1, 2))
        self.assertEqual(requests, [("2025-01-01", "2026-01-01"), ("2026-01-02", "2026-01-02")])

    def test_a_day_name_stays_in_the_last_request_whatever_date_it_means(self):
        start = TODAY - timedelta(days=800)
        requests = range_requests(start, "tomorrow", today_utc=TODAY)
        self.assertEqual(requests[-1][1], "tomorrow")
        for shift in (-1, 0, 1):  # "tomorrow" in the series' zone is within a day of UTC's
            meant = TODAY + timedelta(days=1 + shift)
            days = days_of(requests, {"tomorrow": meant})
            self.assertEqual(days, [start + timedelta(days=i) for i in range((meant - start).days + 1)])

    def test_a_day_name_at_the_start_stays_in_the_first_request(self):
        end = TODAY + timedelta(days=500)
        requests = range_requests("yesterday", end, today_utc=TODAY)
        self.assertEqual(requests[0][0], "yesterday")
        for shift in (-1, 0, 1):
            meant = TODAY + timedelta(days=-1 + shift)
            self.assertEqual(days_of(requests, {"yesterday": meant})[0], meant)
            self.assertEqual(days_of(requests, {"yesterday": meant})[-1], end)

    def test_a_name_near_the_limit_is_split_rather_than_risk_367_days(self):
        requests = range_requests(TODAY - timedelta(days=365), "today", today_utc=TODAY)
        self.assertEqual(len(requests), 2)

    def test_what_the_server_must_judge_goes_as_one_request(self):
        self.assertEqual(range_requests("2026-13-01", "2030-01-01"), [("2026-13-01", "2030-01-01")])
        self.assertEqual(range_requests("2030-01-01", "2020-01-01"), [("2030-01-01", "2020-01-01")])

    def test_a_datetime_is_refused_rather_than_cut_to_a_day_silently(self):
        from datetime import datetime, timezone

        with self.assertRaises(TypeError):
            range_requests(datetime(2026, 1, 1, tzinfo=timezone.utc), date(2026, 2, 1))


if __name__ == "__main__":
    unittest.main()
