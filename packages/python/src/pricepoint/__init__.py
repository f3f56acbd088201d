"""A typed client for the Pricepoint price data API: standard library only, Python 3.9+.

>>> from pricepoint import PricepointClient
>>> client = PricepointClient()  # doctest: +SKIP  (PRICEPOINT_API_KEY, PRICEPOINT_URL)
>>> for point in client.today(symbols=["NO1"]).points("NO1"):  # doctest: +SKIP
...     print(point.start, point.price)  # an aware datetime and a Decimal
"""

from ._days import MAX_RANGE_DAYS, range_requests
from ._http import RetryEvent
from .client import PricepointClient, __version__
from .errors import (
    ApiKeyInQueryError,
    ConflictingApiKeysError,
    InsufficientScopeError,
    InternalServerError,
    InvalidApiKeyError,
    InvalidParameterError,
    InvalidPricesError,
    MethodNotAllowedError,
    MissingApiKeyError,
    NotAcceptableError,
    NotFoundError,
    OutsideTierHistoryError,
    PayloadTooLargeError,
    PricepointError,
    RateLimitedError,
    ServiceUnavailableError,
    TooManyAuthFailuresError,
    UnknownSeriesError,
    UnsupportedMediaTypeError,
)
from .models import (
    Cheapest,
    CheapestSeries,
    Coverage,
    FxRate,
    PricePoint,
    Prices,
    RateLimit,
    SeriesDay,
    SeriesInfo,
    Span,
    Usage,
    UsageLimit,
    Window,
)

__all__ = [
    "MAX_RANGE_DAYS",
    "ApiKeyInQueryError",
    "Cheapest",
    "CheapestSeries",
    "ConflictingApiKeysError",
    "Coverage",
    "FxRate",
    "InsufficientScopeError",
    "InternalServerError",
    "InvalidApiKeyError",
    "InvalidParameterError",
    "InvalidPricesError",
    "MethodNotAllowedError",
    "MissingApiKeyError",
    "NotAcceptableError",
    "NotFoundError",
    "OutsideTierHistoryError",
    "PayloadTooLargeError",
    "PricePoint",
    "Prices",
    "PricepointClient",
    "PricepointError",
    "RateLimit",
    "RateLimitedError",
    "RetryEvent",
    "SeriesDay",
    "SeriesInfo",
    "ServiceUnavailableError",
    "Span",
    "TooManyAuthFailuresError",
    "UnknownSeriesError",
    "UnsupportedMediaTypeError",
    "Usage",
    "UsageLimit",
    "Window",
    "__version__",
    "range_requests",
]
