"""Settings read from the environment once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Settings:
    database_url: str
    pool_size: int = 10
    tax_rate: float = 0.2
    free_shipping_over: int = 5000
    shipping_fee: int = 490
    reservation_minutes: int = 15
    smtp_host: str = "localhost"
    admin_tokens: frozenset[str] = field(default_factory=frozenset)


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as error:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from error


def load_settings() -> Settings:
    """Build the settings from environment variables, failing early on bad values."""
    url = os.environ.get("ORDERS_DATABASE_URL")
    if not url:
        raise RuntimeError("ORDERS_DATABASE_URL is not set")
    tokens = frozenset(t for t in os.environ.get("ORDERS_ADMIN_TOKENS", "").split(",") if t)
    return Settings(
        database_url=url,
        pool_size=_int_env("ORDERS_POOL_SIZE", 10),
        tax_rate=float(os.environ.get("ORDERS_TAX_RATE", "0.2")),
        free_shipping_over=_int_env("ORDERS_FREE_SHIPPING_OVER", 5000),
        shipping_fee=_int_env("ORDERS_SHIPPING_FEE", 490),
        reservation_minutes=_int_env("ORDERS_RESERVATION_MINUTES", 15),
        smtp_host=os.environ.get("ORDERS_SMTP_HOST", "localhost"),
        admin_tokens=tokens,
    )
