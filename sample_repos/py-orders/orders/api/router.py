"""A small router: handlers register with decorators, requests are matched by method
and path template (``/orders/{order_id}``)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[..., Awaitable[Any]]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    state: dict[str, Any] = field(default_factory=dict)

    def json(self) -> Any:
        if not self.body:
            return {}
        try:
            return json.loads(self.body)
        except json.JSONDecodeError as error:
            raise HttpError(400, f"body is not JSON: {error.msg}") from error


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        return json.dumps(self.body, default=str).encode()


class HttpError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Handler


def compile_template(template: str) -> re.Pattern[str]:
    """``/orders/{order_id}`` -> a regex with one named group per placeholder (digits
    for names ending in ``_id``)."""

    def group(match: re.Match[str]) -> str:
        name = match.group(1)
        body = r"\d+" if name.endswith("_id") else r"[^/]+"
        return f"(?P<{name}>{body})"

    return re.compile("^" + re.sub(r"\{(\w+)\}", group, template) + "$")


class Router:
    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix.rstrip("/")
        self.routes: list[Route] = []

    def add(self, method: str, template: str, handler: Handler) -> None:
        full = self.prefix + template
        self.routes.append(Route(method, full, compile_template(full), handler))

    def route(self, method: str, template: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.add(method, template, handler)
            return handler

        return register

    def get(self, template: str) -> Callable[[Handler], Handler]:
        return self.route("GET", template)

    def post(self, template: str) -> Callable[[Handler], Handler]:
        return self.route("POST", template)

    def delete(self, template: str) -> Callable[[Handler], Handler]:
        return self.route("DELETE", template)

    def match(self, method: str, path: str) -> tuple[Handler, dict[str, Any]]:
        """The handler for a request and its path parameters; 405 when the path exists
        under another method, 404 when it does not exist."""
        allowed = []
        for route in self.routes:
            found = route.pattern.match(path)
            if found is None:
                continue
            if route.method != method:
                allowed.append(route.method)
                continue
            params = {
                key: int(value) if key.endswith("_id") else value
                for key, value in found.groupdict().items()
            }
            return route.handler, params
        if allowed:
            raise HttpError(405, f"{method} not allowed; use {', '.join(sorted(allowed))}")
        raise HttpError(404, f"no route for {path}")

    async def dispatch(self, request: Request) -> Response:
        try:
            handler, params = self.match(request.method, request.path)
            result = await handler(request, **params)
        except HttpError as error:
            return Response(error.status, {"error": error.detail})
        if isinstance(result, Response):
            return result
        return Response(200, result)
