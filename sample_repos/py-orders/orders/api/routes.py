"""HTTP handlers: parse and check the request, call the service layer, shape the answer."""

from __future__ import annotations

from typing import Any

from orders.api.auth import rate_limit, require_admin, require_customer
from orders.api.router import HttpError, Request, Response, Router
from orders.models import Order, OrderError
from orders.services.inventory import InventoryService
from orders.services.orders import OrderService
from orders.services.pricing import Quote

router = Router(prefix="/api/v1")
services: dict[str, Any] = {}  # filled by orders.api.app.create_app
ADMIN_TOKENS: frozenset[str] = frozenset()


def order_service() -> OrderService:
    return services["orders"]


def inventory_service() -> InventoryService:
    return services["inventory"]


def order_json(order: Order) -> dict[str, Any]:
    return {
        "id": order.id,
        "status": order.status.value,
        "coupon": order.coupon,
        "created_at": order.created_at.isoformat(),
        "lines": [
            {"product_id": line.product_id, "quantity": line.quantity, "price": line.unit_price}
            for line in order.lines
        ],
        "subtotal": order.subtotal(),
    }


def quote_json(priced: Quote) -> dict[str, int]:
    return {
        "subtotal": priced.subtotal,
        "discount": priced.discount,
        "shipping": priced.shipping,
        "tax": priced.tax,
        "total": priced.total,
    }


def parse_basket(payload: Any) -> dict[int, int]:
    """Read ``{"items": [{"product_id": 1, "quantity": 2}, ...]}``, adding up repeated
    products, with a 422 that names the bad item."""
    items = payload.get("items") if isinstance(payload, dict) else None
    if not isinstance(items, list) or not items:
        raise HttpError(422, "items must be a non-empty list")
    basket: dict[int, int] = {}
    for index, item in enumerate(items):
        try:
            product_id = int(item["product_id"])
            quantity = int(item.get("quantity", 1))
        except (KeyError, TypeError, ValueError) as error:
            raise HttpError(422, f"items[{index}] is not a product and quantity") from error
        basket[product_id] = basket.get(product_id, 0) + quantity
    return basket


def translate_errors(handler):
    """Turn the service layer's OrderError into an HTTP error with its status code."""

    async def wrapped(request: Request, **params):
        try:
            return await handler(request, **params)
        except OrderError as error:
            raise HttpError(error.status_code, str(error)) from error

    wrapped.__name__ = handler.__name__
    return wrapped


@router.get("/health")
async def health(request: Request) -> dict[str, str]:
    return {"status": "ok"}


@router.post("/orders/quote")
@require_customer
@translate_errors
async def quote_basket(request: Request) -> dict[str, int]:
    payload = request.json()
    basket = parse_basket(payload)
    priced = await order_service().preview(
        request.state["customer_id"], basket, payload.get("coupon")
    )
    return quote_json(priced)


@router.post("/orders")
@require_customer
@rate_limit(per_minute=10)
@translate_errors
async def create_order(request: Request) -> Response:
    """Place an order for the signed-in customer and answer 201 with the order and its
    price breakdown."""
    payload = request.json()
    basket = parse_basket(payload)
    order, priced = await order_service().place_order(
        request.state["customer_id"], basket, payload.get("coupon")
    )
    body = {"order": order_json(order), "price": quote_json(priced)}
    return Response(201, body, {"location": f"/api/v1/orders/{order.id}"})


@router.get("/orders")
@require_customer
@translate_errors
async def list_orders(request: Request) -> dict[str, Any]:
    status = request.query.get("status")
    history = await order_service().history(request.state["customer_id"], status)
    return {"orders": [order_json(order) for order in history], "count": len(history)}


@router.get("/orders/{order_id}")
@require_customer
@translate_errors
async def get_order(request: Request, order_id: int) -> dict[str, Any]:
    order = await order_service().get_order(order_id, request.state["customer_id"])
    return order_json(order)


@router.delete("/orders/{order_id}")
@require_customer
@translate_errors
async def cancel_order(request: Request, order_id: int) -> dict[str, Any]:
    order = await order_service().cancel(order_id, request.state["customer_id"])
    return order_json(order)


@router.post("/admin/orders/{order_id}/ship")
@require_admin(lambda: ADMIN_TOKENS)
@translate_errors
async def ship_order(request: Request, order_id: int) -> dict[str, Any]:
    return order_json(await order_service().ship(order_id))


@router.post("/admin/orders/{order_id}/refund")
@require_admin(lambda: ADMIN_TOKENS)
@translate_errors
async def refund_order(request: Request, order_id: int) -> dict[str, Any]:
    reason = str(request.json().get("reason", ""))
    return order_json(await order_service().refund(order_id, reason))


@router.get("/admin/stock/low")
@require_admin(lambda: ADMIN_TOKENS)
async def low_stock(request: Request) -> dict[str, Any]:
    threshold = int(request.query.get("threshold", "5"))
    return {"products": await inventory_service().restock_report(threshold)}


@router.post("/webhooks/payments")
@translate_errors
async def payment_webhook(request: Request) -> Response:
    """Mark an order paid when the payment provider confirms it; other events are
    acknowledged and ignored."""
    event = request.json()
    if event.get("type") != "payment.succeeded":
        return Response(202, {"ignored": event.get("type")})
    order_id = int(event.get("data", {}).get("order_id", 0))
    if order_id <= 0:
        raise HttpError(422, "payment event without an order id")
    order = await order_service().mark_paid(order_id)
    return Response(200, {"order": order.id, "status": order.status.value})
