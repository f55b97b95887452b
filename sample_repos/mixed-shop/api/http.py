"""Route registration by decorator; the server looks handlers up in ROUTES."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

Handler = Callable[..., Awaitable[object]]
ROUTES: dict[tuple[str, str], Handler] = {}


def route(method: str, path: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        if (method, path) in ROUTES:
            raise ValueError(f"{method} {path} is registered twice")
        ROUTES[(method, path)] = handler
        return handler

    return register


get = lambda path: route("GET", path)  # noqa: E731
post = lambda path: route("POST", path)  # noqa: E731
