"""`serve` runs the GitHub App; `jobs` shows what its job store holds."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sqlite3

from bot.cli.console import UsageError, emit
from bot.service.settings import data_dir
from bot.stores.jobs import Job
from bot.stores.sqlitejobs import DB_NAME, read_jobs


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.service.app import serve

    serve(args.host, args.port)
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    """One JSON object a line from the service's job store (the database DATABASE_URL names, else
    $LLAMA_BOT_DATA_DIR/jobs.sqlite3), newest first."""
    found, where = _find_jobs(args)
    if args.id is not None and not found:
        raise UsageError(f"no job {args.id} in {where}")
    for job in found:
        emit(json.dumps(_listed(job, whole=args.id is not None)))
    return 0


def _find_jobs(args: argparse.Namespace) -> tuple[list[Job], str]:
    """The jobs the options ask for, and where they were looked for (for messages)."""
    database = os.environ.get("DATABASE_URL")
    path = data_dir(os.environ) / DB_NAME
    where = "the database DATABASE_URL names" if database else str(path)
    try:
        if database:
            return _shared_jobs(database, args, where), where
        return read_jobs(path, status=args.status, job_id=args.id, limit=args.limit), where
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot read the jobs in {where}: {exc}") from None


def _shared_jobs(database: str, args: argparse.Namespace, where: str) -> list[Job]:
    import psycopg

    from bot.stores.pgstore import read_jobs as read_shared_jobs

    try:
        return read_shared_jobs(database, status=args.status, job_id=args.id, limit=args.limit)
    except psycopg.Error as exc:
        raise UsageError(f"cannot read the jobs in {where}: {' '.join(str(exc).split())}") from None


def _listed(job: Job, whole: bool) -> dict:
    """A job as `jobs` prints it: a listing leaves out the payload and progress, one job shows them."""
    shown = dataclasses.asdict(job)
    if not whole:
        del shown["payload"], shown["progress"]
    return shown
