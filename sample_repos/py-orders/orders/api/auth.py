"""Decorators that guard handlers: customer tokens, admin tokens, rate limits."""

from __future__ import annotations

import functools
import hashlib
import hmac
import time
from collections import defaultdict, deque
from collections.abc import Callable

from orders.api.router import Handler, HttpError, Request

SECRET = b"change-me"


def sign_customer(customer_id: int) -> str:
    digest = hmac.new(SECRET, str(customer_id).encode(), hashlib.sha256).hexdigest()
    return f"{customer_id}.{digest[:32]}"


def verify_customer_token(token: str) -> int | None:
    """The customer id in a signed token, or None when the signature does not match."""
    customer, _, signature = token.partition(".")
    if not customer.isdigit() or not signature:
        return None
    expected = sign_customer(int(customer)).partition(".")[2]
    return int(customer) if hmac.compare_digest(expected, signature) else None


def require_customer(handler: Handler) -> Handler:
    """Reject requests without a valid ``Authorization: Bearer`` customer token and pass
    the customer id on in ``request.state``."""

    @functools.wraps(handler)
    async def guarded(request: Request, **params):
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        customer_id = verify_customer_token(token) if scheme.lower() == "bearer" else None
        if customer_id is None:
            raise HttpError(401, "a customer token is required")
        request.state["customer_id"] = customer_id
        return await handler(request, **params)

    return guarded


def require_admin(tokens: Callable[[], frozenset[str]]):
    """Only callers with one of the admin tokens (read at call time) get through."""

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def guarded(request: Request, **params):
            if request.headers.get("x-admin-token", "") not in tokens():
                raise HttpError(403, "admin only")
            return await handler(request, **params)

        return guarded

    return decorate


def rate_limit(per_minute: int):
    """Allow each client (by customer id or address) ``per_minute`` calls in any sliding
    minute; more get 429."""
    calls: dict[str, deque[float]] = defaultdict(deque)

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def limited(request: Request, **params):
            key = str(request.state.get("customer_id") or request.headers.get("x-real-ip", "?"))
            now = time.monotonic()
            window = calls[key]
            while window and now - window[0] > 60:
                window.popleft()
            if len(window) >= per_minute:
                raise HttpError(429, "too many requests, slow down")
            window.append(now)
            return await handler(request, **params)

        return limited

    return decorate
