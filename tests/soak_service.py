"""`python -m bot serve` with a job lease of N seconds instead of the service's 60, for the short soak.

`python -m tests.soak_service N --host H --port P`: the same service, process and environment; only the
time after which a killed instance's jobs go to another worker is shorter, so that the short soak's kills
cost seconds rather than minutes. The full soak (`make soak`) runs `python -m bot serve` itself.
"""

from __future__ import annotations

import sys

from bot import app, cli
from bot.pgstore import PostgresJobQueue
from bot.sqlitejobs import SqliteJobQueue


def main() -> None:
    lease = float(sys.argv.pop(1))

    class ShortLeaseSqlite(SqliteJobQueue):
        def __init__(self, path, **kwargs):
            super().__init__(path, **{"lease_seconds": lease, **kwargs})

    class ShortLeasePostgres(PostgresJobQueue):
        def __init__(self, url, **kwargs):
            super().__init__(url, **{"lease_seconds": lease, **kwargs})

    app.SqliteJobQueue, app.PostgresJobQueue = ShortLeaseSqlite, ShortLeasePostgres
    sys.argv.insert(1, "serve")
    raise SystemExit(cli.main())


if __name__ == "__main__":
    main()
