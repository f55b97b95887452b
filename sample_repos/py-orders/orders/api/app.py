"""Wiring: build the services once, open and close resources with the process."""

from __future__ import annotations

import asyncio
import logging

from orders.api import routes
from orders.api.router import Request, Response, Router
from orders.config import Settings, load_settings
from orders.data.db import Database
from orders.data.repositories import (
    CouponRepository,
    CustomerRepository,
    OrderRepository,
    ProductRepository,
)
from orders.services.inventory import InventoryService
from orders.services.notifications import Mailer
from orders.services.orders import OrderService

log = logging.getLogger(__name__)


class App:
    def __init__(self, settings: Settings, router: Router) -> None:
        self.settings = settings
        self.router = router
        self.db = Database(settings)
        self.mailer = Mailer(settings)
        self._sweeper: asyncio.Task[None] | None = None

    def build_services(self) -> None:
        products = ProductRepository(self.db)
        inventory = InventoryService(products)
        routes.services["inventory"] = inventory
        routes.services["orders"] = OrderService(
            self.db,
            self.settings,
            OrderRepository(self.db),
            CustomerRepository(self.db),
            CouponRepository(self.db),
            inventory,
            self.mailer,
        )

    async def startup(self) -> None:
        """Open the pool, start the mailer and the sweeper that expires unpaid orders."""
        await self.db.connect()
        self.build_services()
        self.mailer.start()
        self._sweeper = asyncio.create_task(self._sweep_forever())
        log.info("orders service ready")

    async def shutdown(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        await self.mailer.stop()
        await self.db.close()

    async def _sweep_forever(self, every: float = 60.0) -> None:
        while True:
            try:
                expired = await routes.order_service().expire_stale_drafts()
                if expired:
                    log.info("expired %d unpaid orders", expired)
            except Exception:  # keep sweeping whatever one run hit
                log.exception("sweep failed")
            await asyncio.sleep(every)

    async def handle(self, request: Request) -> Response:
        response = await self.router.dispatch(request)
        log.debug("%s %s -> %d", request.method, request.path, response.status)
        return response


def create_app(settings: Settings | None = None) -> App:
    settings = settings or load_settings()
    routes.ADMIN_TOKENS = settings.admin_tokens
    return App(settings, routes.router)
