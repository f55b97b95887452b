"""SQL for orders, products, customers and coupons; nothing above this layer writes SQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from orders.data.db import Database
from orders.models import Coupon, Customer, Order, OrderLine, OrderStatus, Product


def _order_from_rows(head: Any, lines: list[Any]) -> Order:
    return Order(
        id=head["id"],
        customer_id=head["customer_id"],
        status=OrderStatus(head["status"]),
        coupon=head["coupon"],
        created_at=head["created_at"],
        paid_at=head["paid_at"],
        shipped_at=head["shipped_at"],
        lines=[OrderLine(r["product_id"], r["quantity"], r["unit_price"]) for r in lines],
    )


class OrderRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, order_id: int) -> Order | None:
        head = await self.db.fetchrow("SELECT * FROM orders WHERE id = $1", order_id)
        if head is None:
            return None
        lines = await self.db.fetch(
            "SELECT * FROM order_lines WHERE order_id = $1 ORDER BY product_id", order_id
        )
        return _order_from_rows(head, lines)

    async def list_for_customer(
        self, customer_id: int, status: OrderStatus | None = None, limit: int = 50
    ) -> list[Order]:
        """Newest first, optionally only one status; lines loaded in a single query."""
        if status is None:
            heads = await self.db.fetch(
                "SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2",
                customer_id,
                limit,
            )
        else:
            heads = await self.db.fetch(
                "SELECT * FROM orders WHERE customer_id = $1 AND status = $2 "
                "ORDER BY created_at DESC LIMIT $3",
                customer_id,
                status.value,
                limit,
            )
        ids = [head["id"] for head in heads]
        lines = await self.db.fetch(
            "SELECT * FROM order_lines WHERE order_id = ANY($1::int[])", ids
        )
        by_order: dict[int, list[Any]] = {}
        for line in lines:
            by_order.setdefault(line["order_id"], []).append(line)
        return [_order_from_rows(head, by_order.get(head["id"], [])) for head in heads]

    async def insert(self, connection: Any, order: Order) -> int:
        order_id = await connection.fetchval(
            "INSERT INTO orders (customer_id, status, coupon, created_at) "
            "VALUES ($1, $2, $3, $4) RETURNING id",
            order.customer_id,
            order.status.value,
            order.coupon,
            order.created_at,
        )
        await connection.executemany(
            "INSERT INTO order_lines (order_id, product_id, quantity, unit_price) "
            "VALUES ($1, $2, $3, $4)",
            [(order_id, x.product_id, x.quantity, x.unit_price) for x in order.lines],
        )
        return order_id

    async def set_status(
        self, connection: Any, order_id: int, status: OrderStatus, at: datetime | None = None
    ) -> None:
        column = {OrderStatus.PAID: "paid_at", OrderStatus.SHIPPED: "shipped_at"}.get(status)
        if column is None:
            await connection.execute(
                "UPDATE orders SET status = $2 WHERE id = $1", order_id, status.value
            )
        else:
            await connection.execute(
                f"UPDATE orders SET status = $2, {column} = $3 WHERE id = $1",
                order_id,
                status.value,
                at or datetime.utcnow(),
            )

    async def count_by_status(self) -> dict[str, int]:
        rows = await self.db.fetch("SELECT status, count(*) AS n FROM orders GROUP BY status")
        return {row["status"]: row["n"] for row in rows}


class ProductRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get_many(self, product_ids: list[int]) -> dict[int, Product]:
        rows = await self.db.fetch("SELECT * FROM products WHERE id = ANY($1::int[])", product_ids)
        return {row["id"]: Product(**dict(row)) for row in rows}

    async def search(self, text: str, limit: int = 20) -> list[Product]:
        rows = await self.db.fetch(
            "SELECT * FROM products WHERE active AND name ILIKE '%' || $1 || '%' "
            "ORDER BY name LIMIT $2",
            text,
            limit,
        )
        return [Product(**dict(row)) for row in rows]

    async def reserve_stock(self, connection: Any, product_id: int, quantity: int) -> bool:
        """Take stock for an order; False when there is not enough left."""
        result = await connection.execute(
            "UPDATE products SET stock = stock - $2 WHERE id = $1 AND stock >= $2",
            product_id,
            quantity,
        )
        return result.endswith(" 1")

    async def release_stock(self, connection: Any, product_id: int, quantity: int) -> None:
        await connection.execute(
            "UPDATE products SET stock = stock + $2 WHERE id = $1", product_id, quantity
        )

    async def low_stock(self, threshold: int = 5) -> list[Product]:
        rows = await self.db.fetch(
            "SELECT * FROM products WHERE active AND stock <= $1 ORDER BY stock", threshold
        )
        return [Product(**dict(row)) for row in rows]


class CustomerRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, customer_id: int) -> Customer | None:
        row = await self.db.fetchrow("SELECT * FROM customers WHERE id = $1", customer_id)
        return Customer(**dict(row)) if row else None

    async def by_email(self, email: str) -> Customer | None:
        row = await self.db.fetchrow(
            "SELECT * FROM customers WHERE lower(email) = lower($1)", email
        )
        return Customer(**dict(row)) if row else None


class CouponRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, code: str) -> Coupon | None:
        row = await self.db.fetchrow("SELECT * FROM coupons WHERE code = $1", code.upper())
        return Coupon(**dict(row)) if row else None

    async def redeem(self, connection: Any, code: str) -> bool:
        result = await connection.execute(
            "UPDATE coupons SET used = used + 1 WHERE code = $1 AND used < max_uses",
            code.upper(),
        )
        return result.endswith(" 1")
