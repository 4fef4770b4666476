"""A real PostgreSQL server for the tests: `initdb` and `pg_ctl` on a temporary directory, on a loopback port.

`initdb` refuses to run as root; as root the server runs as the unprivileged `postgres` account
(`runuser -u postgres --`). Without PostgreSQL's binaries the tests that need it are skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

ACCOUNT = "postgres"


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for directory in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (directory / name).exists():
            return str(directory / name)
    return None


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("PostgreSQL cannot run as root and runuser is missing to run it as the postgres account")
    return [runuser, "-u", ACCOUNT, "--", *command]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    directory: Path
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{ACCOUNT}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database's URL: each test gets its own."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self) -> None:
        """Stop the server (connections drop) and start it again on the same port."""
        self._ctl("restart", "-m", "fast")

    def _ctl(self, *args: str) -> None:
        pg_ctl = _binary("pg_ctl")
        assert pg_ctl is not None
        subprocess.run(
            _as_server_user(
                [
                    pg_ctl,
                    "-D",
                    str(self.directory / "data"),
                    "-l",
                    str(self.directory / "log"),
                    "-w",
                    "-o",
                    f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1",
                    *args,
                ]
            ),
            check=True,
            capture_output=True,
            timeout=60,
        )

    def stop(self) -> None:
        self._ctl("stop", "-m", "immediate")


def start_server() -> PostgresServer:
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL is not installed (no initdb/pg_ctl): the PostgreSQL store's tests need it")
    directory = Path(tempfile.mkdtemp(prefix="llama-bot-pg-"))
    if os.geteuid() == 0:
        shutil.chown(directory, ACCOUNT)
    subprocess.run(
        _as_server_user(
            [initdb, "-D", str(directory / "data"), "-U", ACCOUNT, "-A", "trust", "--no-sync", "-E", "UTF8"]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    with open(directory / "data" / "postgresql.conf", "a") as conf:
        conf.write("fsync = off\nmax_connections = 200\n")  # a throwaway server: its durability is not tested
    server = PostgresServer(directory, _free_port())
    server._ctl("start")
    return server


@pytest.fixture(scope="session")
def postgres_server():
    server = start_server()
    yield server
    server.stop()
    shutil.rmtree(server.directory, ignore_errors=True)


@pytest.fixture
def database_url(postgres_server) -> str:
    return postgres_server.new_database()
