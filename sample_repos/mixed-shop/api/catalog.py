"""Catalog API: products, search and the shopping cart."""

from __future__ import annotations

from dataclasses import dataclass, field

from api.http import get, post


@dataclass
class Product:
    id: int
    name: str
    price_cents: int
    tags: list[str] = field(default_factory=list)


PRODUCTS = {
    1: Product(1, "Espresso beans", 1290, ["coffee"]),
    2: Product(2, "Pour-over kettle", 4500, ["brewing"]),
    3: Product(3, "Ceramic mug", 1100, ["cups"]),
}


def matches(product: Product, words: list[str]) -> bool:
    text = " ".join([product.name, *product.tags]).lower()
    return all(word in text for word in words)


@get("/products")
async def search_products(query: str = "", limit: int = 20) -> list[dict]:
    """Products whose name or tags contain every word of the query, cheapest first."""
    words = [w for w in query.lower().split() if w]
    found = [p for p in PRODUCTS.values() if matches(p, words)]
    found.sort(key=lambda p: p.price_cents)
    return [vars(p) for p in found[:limit]]


class Cart:
    """A customer's cart kept in memory; totals are computed on demand."""

    def __init__(self) -> None:
        self.items: dict[int, int] = {}

    def add(self, product_id: int, quantity: int = 1) -> None:
        if product_id not in PRODUCTS:
            raise KeyError(f"unknown product {product_id}")
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items[product_id] = self.items.get(product_id, 0) + quantity

    def remove(self, product_id: int) -> None:
        self.items.pop(product_id, None)

    def total_cents(self) -> int:
        return sum(PRODUCTS[pid].price_cents * qty for pid, qty in self.items.items())


CARTS: dict[str, Cart] = {}


@post("/cart/{session}/items")
async def add_to_cart(session: str, product_id: int, quantity: int = 1) -> dict:
    """Put a product in the session's cart and answer with the new total."""
    cart = CARTS.setdefault(session, Cart())
    cart.add(product_id, quantity)
    return {"items": cart.items, "total_cents": cart.total_cents()}
