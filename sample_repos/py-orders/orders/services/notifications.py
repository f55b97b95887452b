"""E-mails to customers, sent in the background so requests never wait for SMTP."""

from __future__ import annotations

import asyncio
import logging
from email.message import EmailMessage

from orders.config import Settings
from orders.models import Customer, Order

log = logging.getLogger(__name__)

TEMPLATES = {
    "placed": "Thanks for your order #{id}. We will tell you when it ships.",
    "shipped": "Good news: order #{id} is on its way.",
    "cancelled": "Order #{id} was cancelled; any payment will be refunded.",
}


class Mailer:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.queue: asyncio.Queue[EmailMessage] = asyncio.Queue(maxsize=1000)
        self._worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._worker is None:
            self._worker = asyncio.create_task(self._drain())

    async def stop(self) -> None:
        if self._worker is not None:
            await self.queue.join()
            self._worker.cancel()
            self._worker = None

    def order_message(self, customer: Customer, order: Order, event: str) -> EmailMessage:
        message = EmailMessage()
        message["To"] = customer.email
        message["From"] = "shop@example.com"
        message["Subject"] = f"Order #{order.id}: {event}"
        message.set_content(TEMPLATES[event].format(id=order.id))
        return message

    async def notify(self, customer: Customer, order: Order, event: str) -> None:
        """Queue an order e-mail; when the queue is full the mail is dropped and logged
        rather than blocking the request."""
        try:
            self.queue.put_nowait(self.order_message(customer, order, event))
        except asyncio.QueueFull:
            log.error("mail queue full, dropped %s mail for order %d", event, order.id)

    async def _drain(self) -> None:
        while True:
            message = await self.queue.get()
            try:
                await asyncio.to_thread(self._send, message)
            except OSError as error:
                log.warning("mail to %s failed: %s", message["To"], error)
            finally:
                self.queue.task_done()

    def _send(self, message: EmailMessage) -> None:
        import smtplib

        with smtplib.SMTP(self.settings.smtp_host, timeout=10) as smtp:
            smtp.send_message(message)
