"""Order service for the shop: HTTP routes, business rules and storage."""

from orders.config import Settings, load_settings

__all__ = ["Settings", "load_settings"]
