"""GitHub resources as the jobs use them: one small class per resource, owning its URLs.

Jobs ask for the narrow protocols in `bot.gh.protocols`; these classes implement them over the REST API.
Imports bot.render, bot.stores and the layers below them; never the worker, which uses them.
"""

from __future__ import annotations

import http

from gidgethub import BadRequest, HTTPException


def refused(exc: BadRequest, *statuses: http.HTTPStatus) -> bool:
    """Whether GitHub's 4xx is among `statuses`: the answers a caller handles instead of raising."""
    return exc.status_code in statuses


def message_of(exc: HTTPException) -> str:
    """GitHub's message of an error answer (gidgethub keeps it as the last argument)."""
    return str(exc.args[-1]) if exc.args and not isinstance(exc.args[-1], http.HTTPStatus) else ""
