"""The order life cycle: place, pay, ship, cancel, refund."""

from __future__ import annotations

import logging
from datetime import datetime

from orders.config import Settings
from orders.data.db import Database
from orders.data.repositories import CouponRepository, CustomerRepository, OrderRepository
from orders.models import NotFound, Order, OrderError, OrderStatus
from orders.services.inventory import InventoryService
from orders.services.notifications import Mailer
from orders.services.pricing import Quote, quote

log = logging.getLogger(__name__)

#: Which status may follow which.
TRANSITIONS = {
    OrderStatus.DRAFT: {OrderStatus.PLACED, OrderStatus.CANCELLED},
    OrderStatus.PLACED: {OrderStatus.PAID, OrderStatus.CANCELLED},
    OrderStatus.PAID: {OrderStatus.SHIPPED, OrderStatus.REFUNDED},
    OrderStatus.SHIPPED: {OrderStatus.REFUNDED},
}


def check_transition(order: Order, target: OrderStatus) -> None:
    allowed = TRANSITIONS.get(order.status, set())
    if target not in allowed:
        raise OrderError(
            f"order {order.id} is {order.status.value}; it cannot become {target.value}", 409
        )


class OrderService:
    """Business rules for orders; the API layer calls only this."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        orders: OrderRepository,
        customers: CustomerRepository,
        coupons: CouponRepository,
        inventory: InventoryService,
        mailer: Mailer,
    ) -> None:
        self.db = db
        self.settings = settings
        self.orders = orders
        self.customers = customers
        self.coupons = coupons
        self.inventory = inventory
        self.mailer = mailer

    async def get_order(self, order_id: int, customer_id: int | None = None) -> Order:
        order = await self.orders.get(order_id)
        if order is None or (customer_id is not None and order.customer_id != customer_id):
            raise NotFound(f"order {order_id} not found")
        return order

    async def preview(
        self, customer_id: int, wanted: dict[int, int], coupon_code: str | None
    ) -> Quote:
        customer = await self.customers.get(customer_id)
        if customer is None:
            raise NotFound(f"customer {customer_id} not found")
        lines = await self.inventory.price_lines(wanted)
        coupon = await self.coupons.get(coupon_code) if coupon_code else None
        return quote(lines, customer, coupon, self.settings)

    async def place_order(
        self, customer_id: int, wanted: dict[int, int], coupon_code: str | None = None
    ) -> tuple[Order, Quote]:
        """Price the basket, reserve stock, redeem the coupon and save the order in one
        transaction, then e-mail the customer."""
        customer = await self.customers.get(customer_id)
        if customer is None:
            raise NotFound(f"customer {customer_id} not found")
        lines = await self.inventory.price_lines(wanted)
        coupon = await self.coupons.get(coupon_code) if coupon_code else None
        if coupon_code and coupon is None:
            raise OrderError(f"unknown coupon {coupon_code}")
        priced = quote(lines, customer, coupon, self.settings)
        order = Order(
            id=0,
            customer_id=customer_id,
            status=OrderStatus.PLACED,
            lines=lines,
            coupon=coupon.code if coupon else None,
        )
        async with self.db.transaction() as connection:
            await self.inventory.reserve(connection, lines)
            if coupon is not None and not await self.coupons.redeem(connection, coupon.code):
                raise OrderError(f"coupon {coupon.code} is used up", 409)
            order.id = await self.orders.insert(connection, order)
        await self.mailer.notify(customer, order, "placed")
        log.info("order %d placed by customer %d: %d cents", order.id, customer_id, priced.total)
        return order, priced

    async def mark_paid(self, order_id: int, paid_at: datetime | None = None) -> Order:
        order = await self.get_order(order_id)
        check_transition(order, OrderStatus.PAID)
        async with self.db.transaction() as connection:
            await self.orders.set_status(connection, order_id, OrderStatus.PAID, paid_at)
        order.status = OrderStatus.PAID
        return order

    async def ship(self, order_id: int) -> Order:
        """Mark a paid order shipped and tell the customer."""
        order = await self.get_order(order_id)
        check_transition(order, OrderStatus.SHIPPED)
        async with self.db.transaction() as connection:
            await self.orders.set_status(connection, order_id, OrderStatus.SHIPPED)
        order.status = OrderStatus.SHIPPED
        customer = await self.customers.get(order.customer_id)
        if customer is not None:
            await self.mailer.notify(customer, order, "shipped")
        return order

    async def cancel(self, order_id: int, customer_id: int | None = None) -> Order:
        """Cancel an order that is not paid yet and put its stock back on the shelf."""
        order = await self.get_order(order_id, customer_id)
        check_transition(order, OrderStatus.CANCELLED)
        async with self.db.transaction() as connection:
            await self.inventory.release(connection, order.lines)
            await self.orders.set_status(connection, order_id, OrderStatus.CANCELLED)
        order.status = OrderStatus.CANCELLED
        customer = await self.customers.get(order.customer_id)
        if customer is not None:
            await self.mailer.notify(customer, order, "cancelled")
        return order

    async def refund(self, order_id: int, reason: str) -> Order:
        order = await self.get_order(order_id)
        check_transition(order, OrderStatus.REFUNDED)
        if not reason.strip():
            raise OrderError("a refund needs a reason")
        async with self.db.transaction() as connection:
            if order.status is OrderStatus.PAID:
                await self.inventory.release(connection, order.lines)
            await self.orders.set_status(connection, order_id, OrderStatus.REFUNDED)
        log.info("order %d refunded: %s", order_id, reason)
        order.status = OrderStatus.REFUNDED
        return order

    async def history(self, customer_id: int, status: str | None = None) -> list[Order]:
        wanted = OrderStatus(status) if status else None
        return await self.orders.list_for_customer(customer_id, wanted)

    async def expire_stale_drafts(self, now: datetime | None = None) -> int:
        """Cancel placed orders left unpaid longer than the reservation window."""
        now = now or datetime.utcnow()
        window = self.settings.reservation_minutes * 60
        expired = 0
        counts = await self.orders.count_by_status()
        if not counts.get(OrderStatus.PLACED.value):
            return 0
        rows = await self.db.fetch(
            "SELECT id, created_at FROM orders WHERE status = $1", OrderStatus.PLACED.value
        )
        for row in rows:
            if (now - row["created_at"]).total_seconds() > window:
                await self.cancel(row["id"])
                expired += 1
        return expired
