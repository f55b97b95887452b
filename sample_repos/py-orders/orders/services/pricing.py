"""Prices, discounts, tax and shipping; pure functions, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from orders.config import Settings
from orders.models import Coupon, Customer, OrderError, OrderLine

VIP_PERCENT = 5


@dataclass(frozen=True)
class Quote:
    subtotal: int
    discount: int
    shipping: int
    tax: int

    @property
    def total(self) -> int:
        return self.subtotal - self.discount + self.shipping + self.tax


def percent_of(amount: int, percent: float) -> int:
    """Round half up to whole cents, as the accounting system does."""
    return int(amount * percent / 100 + 0.5)


def coupon_discount(subtotal: int, coupon: Coupon | None, now: datetime) -> int:
    if coupon is None:
        return 0
    if not coupon.usable(now):
        raise OrderError(f"coupon {coupon.code} has expired or is used up")
    return percent_of(subtotal, coupon.percent_off)


def shipping_cost(subtotal_after_discount: int, settings: Settings) -> int:
    if subtotal_after_discount >= settings.free_shipping_over:
        return 0
    return settings.shipping_fee


def quote(
    lines: list[OrderLine],
    customer: Customer,
    coupon: Coupon | None,
    settings: Settings,
    now: datetime | None = None,
) -> Quote:
    """Price a basket: coupon or VIP discount (the larger one), then shipping, then tax
    on the discounted goods and shipping together."""
    now = now or datetime.utcnow()
    subtotal = sum(line.total for line in lines)
    discount = coupon_discount(subtotal, coupon, now)
    if customer.vip:
        discount = max(discount, percent_of(subtotal, VIP_PERCENT))
    shipping = shipping_cost(subtotal - discount, settings)
    tax = percent_of(subtotal - discount + shipping, settings.tax_rate * 100)
    return Quote(subtotal=subtotal, discount=discount, shipping=shipping, tax=tax)


#: Split an amount into near-equal instalments that add up to it exactly.
split_cents = lambda total, parts: [  # noqa: E731
    total // parts + (1 if index < total % parts else 0) for index in range(parts)
]
