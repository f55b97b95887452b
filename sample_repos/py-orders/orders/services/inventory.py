"""Stock reservations: stock is taken when an order is placed and given back on cancel."""

from __future__ import annotations

import logging
from typing import Any

from orders.data.repositories import ProductRepository
from orders.models import OrderError, OrderLine, Product

log = logging.getLogger(__name__)


class InventoryService:
    def __init__(self, products: ProductRepository) -> None:
        self.products = products

    async def price_lines(self, wanted: dict[int, int]) -> list[OrderLine]:
        """Turn {product id: quantity} into order lines at today's prices, refusing
        unknown, inactive or zero-quantity products."""
        if not wanted:
            raise OrderError("an order needs at least one product")
        found = await self.products.get_many(list(wanted))
        lines = []
        for product_id, quantity in sorted(wanted.items()):
            product = found.get(product_id)
            if product is None or not product.active:
                raise OrderError(f"product {product_id} is not for sale", 404)
            if quantity <= 0:
                raise OrderError(f"quantity for {product.sku} must be positive")
            lines.append(OrderLine(product_id, quantity, product.price))
        return lines

    async def reserve(self, connection: Any, lines: list[OrderLine]) -> None:
        """Reserve every line or none: the first shortage aborts the transaction."""
        for line in lines:
            ok = await self.products.reserve_stock(connection, line.product_id, line.quantity)
            if not ok:
                raise OrderError(f"not enough stock for product {line.product_id}", 409)

    async def release(self, connection: Any, lines: list[OrderLine]) -> None:
        for line in lines:
            await self.products.release_stock(connection, line.product_id, line.quantity)
        log.info("released stock for %d lines", len(lines))

    async def restock_report(self, threshold: int = 5) -> list[dict[str, Any]]:
        products = await self.products.low_stock(threshold)

        def row(product: Product) -> dict[str, Any]:
            return {"sku": product.sku, "name": product.name, "stock": product.stock}

        return [row(p) for p in products]
