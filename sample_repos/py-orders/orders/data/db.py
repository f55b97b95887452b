"""The connection pool and the transaction helper every repository uses."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from orders.config import Settings

log = logging.getLogger(__name__)

_RETRYABLE = ("40001", "40P01")  # serialization failure, deadlock


class Database:
    """One asyncpg pool for the process, opened at start-up and closed at shutdown."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pool: asyncpg.Pool | None = None

    async def connect(self) -> None:
        if self._pool is not None:
            return
        self._pool = await asyncpg.create_pool(
            self._settings.database_url,
            min_size=1,
            max_size=self._settings.pool_size,
            command_timeout=10,
        )
        log.info("database pool open (max %d)", self._settings.pool_size)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("Database.connect() was not awaited")
        return self._pool

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        async with self.pool.acquire() as connection:
            return await connection.fetch(query, *args)

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        async with self.pool.acquire() as connection:
            return await connection.fetchrow(query, *args)

    async def execute(self, query: str, *args: Any) -> str:
        async with self.pool.acquire() as connection:
            return await connection.execute(query, *args)

    @asynccontextmanager
    async def transaction(self, retries: int = 3):
        """Run a block in a serializable transaction, retrying on conflicts."""
        attempt = 0
        while True:
            attempt += 1
            async with self.pool.acquire() as connection:
                try:
                    async with connection.transaction(isolation="serializable"):
                        yield connection
                    return
                except asyncpg.PostgresError as error:
                    code = getattr(error, "sqlstate", None)
                    if code not in _RETRYABLE or attempt >= retries:
                        raise
                    log.warning("transaction conflict %s, retry %d", code, attempt)
            await asyncio.sleep(0.05 * 2**attempt)


def rows_to_dicts(rows: list[asyncpg.Record]) -> list[dict[str, Any]]:
    return [dict(row) for row in rows]
