"""Error answers as exceptions: one class per problem code of the server's closed list.

Every error the server sends is ``application/problem+json`` (RFC 9457) with a ``code`` from a closed
list (docs/errors.md in the Pricepoint repository). Each code has its class here, all under
``PricepointError``, which holds the members every problem has. Catch the base class to handle any
error answer, or one class for one case::

    try:
        client.today(symbols=["NO1", "NOPE"])
    except UnknownSeriesError as error:
        print(error.symbols)          # ['NOPE']
    except PricepointError as error:
        print(error.status, error.code, error.detail, error.request_id)
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Type


class PricepointError(Exception):
    """An error answer of the API: its HTTP status and its problem body.

    ``type``, ``title``, ``detail`` and ``instance`` are the RFC 9457 members, ``code`` the
    server's code (``None`` for a body that is no problem, such as a proxy's HTML page),
    ``request_id`` the id to quote to the operator, and ``problem`` the whole body as parsed
    (extension members included).
    """

    code: Optional[str] = None

    def __init__(
        self,
        status: int,
        problem: Mapping[str, Any],
        *,
        request_id: Optional[str] = None,
        retry_after: Optional[int] = None,
    ) -> None:
        self.status = status
        self.problem: Dict[str, Any] = dict(problem)
        self.type: Optional[str] = _text(problem.get("type"))
        self.title: Optional[str] = _text(problem.get("title"))
        self.detail: Optional[str] = _text(problem.get("detail"))
        self.instance: Optional[str] = _text(problem.get("instance"))
        self.code = _text(problem.get("code")) or type(self).code
        self.request_id: Optional[str] = _text(problem.get("requestId")) or request_id
        # Seconds the server asked to wait (the Retry-After header), where it sent one.
        self.retry_after = retry_after
        super().__init__(f"{status} {self.code or self.title or 'error'}: {self.detail or self.title or ''}".strip())


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


class InvalidParameterError(PricepointError):
    """400 ``invalid_parameter``: an unknown parameter or a malformed value, named in ``parameter``."""

    code = "invalid_parameter"

    @property
    def parameter(self) -> Optional[str]:
        return _text(self.problem.get("parameter"))


class MissingApiKeyError(PricepointError):
    """401 ``missing_api_key``: the request carried no key."""

    code = "missing_api_key"


class InvalidApiKeyError(PricepointError):
    """401 ``invalid_api_key``: malformed, unknown, revoked or expired (one answer for all four)."""

    code = "invalid_api_key"


class ConflictingApiKeysError(PricepointError):
    """401 ``conflicting_api_keys``: ``x-api-key`` and ``Authorization`` named different keys."""

    code = "conflicting_api_keys"


class ApiKeyInQueryError(PricepointError):
    """401 ``api_key_in_query``: a key, or a parameter named like one, in the query string."""

    code = "api_key_in_query"


class InsufficientScopeError(PricepointError):
    """403 ``insufficient_scope``: the key's scopes or its tier's kinds do not allow this."""

    code = "insufficient_scope"


class OutsideTierHistoryError(PricepointError):
    """403 ``outside_tier_history``: a day further back than the tier may read."""

    code = "outside_tier_history"


class UnknownSeriesError(PricepointError):
    """404 ``unknown_series``: every unknown symbol is in ``symbols``."""

    code = "unknown_series"

    @property
    def symbols(self) -> List[str]:
        symbols = self.problem.get("symbols")
        return [s for s in symbols if isinstance(s, str)] if isinstance(symbols, list) else []


class NotFoundError(PricepointError):
    """404 ``not_found``: no such route or resource."""

    code = "not_found"


class MethodNotAllowedError(PricepointError):
    """405 ``method_not_allowed``."""

    code = "method_not_allowed"


class NotAcceptableError(PricepointError):
    """406 ``not_acceptable``: ``Accept`` named nothing the endpoint sends."""

    code = "not_acceptable"


class PayloadTooLargeError(PricepointError):
    """413 ``payload_too_large``."""

    code = "payload_too_large"


class UnsupportedMediaTypeError(PricepointError):
    """415 ``unsupported_media_type``."""

    code = "unsupported_media_type"


class InvalidPricesError(PricepointError):
    """422 ``invalid_prices``: points that cannot be written, every one named in ``errors``."""

    code = "invalid_prices"


class RateLimitedError(PricepointError):
    """429 ``rate_limited``: a limit of the key's tier is used up; ``retry_after`` says for how long.

    The client waits and retries by itself when the wait is short enough (``max_retry_delay``);
    this is raised when it is not, or when the retries are used up.
    """

    code = "rate_limited"

    @property
    def violated_policies(self) -> List[str]:
        policies = self.problem.get("violated-policies")
        return [p for p in policies if isinstance(p, str)] if isinstance(policies, list) else []


class TooManyAuthFailuresError(PricepointError):
    """429 ``too_many_auth_failures``: the client address used up its failed-login budget."""

    code = "too_many_auth_failures"


class InternalServerError(PricepointError):
    """500 ``internal``: a fault of the server (the body holds no internals; quote ``request_id``)."""

    code = "internal"


class ServiceUnavailableError(PricepointError):
    """503 ``service_unavailable``: a store is away; the client retries it with backoff first."""

    code = "service_unavailable"


ERRORS_BY_CODE: Mapping[str, Type[PricepointError]] = {
    cls.code: cls
    for cls in (
        InvalidParameterError,
        MissingApiKeyError,
        InvalidApiKeyError,
        ConflictingApiKeysError,
        ApiKeyInQueryError,
        InsufficientScopeError,
        OutsideTierHistoryError,
        UnknownSeriesError,
        NotFoundError,
        MethodNotAllowedError,
        NotAcceptableError,
        PayloadTooLargeError,
        UnsupportedMediaTypeError,
        InvalidPricesError,
        RateLimitedError,
        TooManyAuthFailuresError,
        InternalServerError,
        ServiceUnavailableError,
    )
    if cls.code is not None
}


def error_for(
    status: int,
    problem: Mapping[str, Any],
    *,
    request_id: Optional[str] = None,
    retry_after: Optional[int] = None,
) -> PricepointError:
    """The exception for an error answer: the class of its ``code``, else ``PricepointError``."""
    code = problem.get("code")
    cls = ERRORS_BY_CODE.get(code, PricepointError) if isinstance(code, str) else PricepointError
    return cls(status, problem, request_id=request_id, retry_after=retry_after)
