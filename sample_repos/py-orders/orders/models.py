"""Plain records passed between the layers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class OrderStatus(StrEnum):
    DRAFT = "draft"
    PLACED = "placed"
    PAID = "paid"
    SHIPPED = "shipped"
    CANCELLED = "cancelled"
    REFUNDED = "refunded"


@dataclass
class Product:
    id: int
    sku: str
    name: str
    price: int  # cents
    stock: int
    active: bool = True


@dataclass
class OrderLine:
    product_id: int
    quantity: int
    unit_price: int

    @property
    def total(self) -> int:
        return self.quantity * self.unit_price


@dataclass
class Order:
    id: int
    customer_id: int
    status: OrderStatus
    lines: list[OrderLine] = field(default_factory=list)
    coupon: str | None = None
    created_at: datetime = field(default_factory=datetime.utcnow)
    paid_at: datetime | None = None
    shipped_at: datetime | None = None

    def subtotal(self) -> int:
        return sum(line.total for line in self.lines)

    def is_open(self) -> bool:
        return self.status in (OrderStatus.DRAFT, OrderStatus.PLACED)


@dataclass
class Customer:
    id: int
    email: str
    name: str
    vip: bool = False


@dataclass
class Coupon:
    code: str
    percent_off: int
    max_uses: int
    used: int = 0
    expires_at: datetime | None = None

    def usable(self, now: datetime) -> bool:
        if self.used >= self.max_uses:
            return False
        return self.expires_at is None or now < self.expires_at


class OrderError(Exception):
    """A request the order rules refuse; the API turns it into a 4xx answer."""

    status_code = 400

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code


class NotFound(OrderError):
    status_code = 404
