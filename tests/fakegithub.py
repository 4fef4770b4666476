"""A fake GitHub REST API for the bot's tests.

A real aiohttp server on 127.0.0.1 routes every request by the ``paths`` of
``tests/data/github/openapi/github-subset.json`` (GitHub's own description, cut to
the operations the bot uses), checks App JWTs and installation tokens like
GitHub, validates parameters and JSON bodies with jsonschema, and reads and
writes repository data in real pygit2 repositories.  Whatever the bot sends
that the description forbids is recorded in ``FakeGitHub.violations``; the
``fake_github`` fixture fails the test when that list is not empty.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import datetime as dt
import functools
import hashlib
import hmac
import itertools
import json
import random
import re
import secrets
import shutil
import socket
import tempfile
import time
import urllib.parse
import zlib
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, Self

import aiohttp
import jsonschema
import jwt
import pygit2
import pytest_asyncio
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub.aiohttp import GitHubAPI
from gidgethub.apps import get_installation_access_token

DATA = (
    Path(__file__).resolve().parent / "data" / "github"
)  # the OpenAPI cut and webhook payloads, see SOURCE.md
DOCS = "https://docs.github.com/rest"
# Operations GitHub authenticates with the App JWT; all others need an installation token.
JWT_OPERATIONS = {
    "apps/get-authenticated",
    "apps/list-installations",
    "apps/create-installation-access-token",
    "apps/get-repo-installation",
}
# Operations GitHub answers without authentication: the manifest flow's code is the credential.
NO_AUTH_OPERATIONS = {"apps/create-from-manifest"}
MANIFEST_FORMS = ("/settings/apps/new", "/organizations/{org}/settings/apps/new")  # github.com pages, not API
GREEDY_PARAMS = {"path", "ref", "basehead", "branch"}  # these path parameters may contain "/"
JWT_MAX_LIFETIME = 600 + 30  # GitHub allows 10 minutes; a little slack for clock rounding
MAX_COMMENT = 65536  # GitHub's limit on issue comment bodies
DEFAULT_PERMISSIONS = {
    "actions": "write",
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
}
# GitHub's answer to a client over a secondary rate limit (403 with Retry-After; GitHub adds a request id).
SECONDARY_RATE_LIMIT = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    "documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-"
    "rest-api#about-secondary-rate-limits",
}
FAULT_KINDS = ("502", "503", "rate_limit")  # answered instead of the request, which is not carried out
LOST_ANSWER_KINDS = ("closed_after_write", "502_after_write")  # a POST carried out, its answer lost
DIFF_LINES = 20_000  # the patch lines one response of a pull request's or a comparison's files carries
DIFF_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "changed"}


@functools.cache
def _load(relative: str) -> Any:
    return json.loads((DATA / relative).read_text())


def payload(name: str, **overrides: Any) -> dict:
    """A fresh copy of ``payloads/<name>.json`` (e.g. "pull_request.opened") with top-level overrides."""
    data = copy.deepcopy(_load(f"payloads/{name}.json"))
    data.update(overrides)
    return data


def sign(body: bytes, secret: str | bytes) -> str:
    """The X-Hub-Signature-256 value GitHub sends for ``body``."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def commit(
    git: pygit2.Repository,
    files: dict[str, str | bytes | None],
    *,
    parents: list[str] | None = None,
    message: str = "test commit",
    ref: str | None = None,
) -> str:
    """Write a commit for test setup: the first parent's tree with ``files`` applied (None deletes).

    ``parents`` defaults to the current target of ``ref`` (if it exists); ``ref`` is moved to the commit.
    """
    if parents is None:
        parents = [str(git.references[ref].target)] if ref and ref in git.references else []
    flat = _flatten(git, git[parents[0]].peel(pygit2.Tree)) if parents else {}
    for path, content in files.items():
        _drop(flat, path)
        if content is not None:
            data = content.encode() if isinstance(content, str) else content
            flat[path] = (git.create_blob(data), 0o100644)
    sig = pygit2.Signature("Test Author", "test@example.com", int(time.time()), 0)
    oid = git.create_commit(None, sig, sig, message, _build_tree(git, flat), parents)
    if ref:
        git.references.create(ref, oid, force=True)
    return str(oid)


def iso(epoch: float | None = None) -> str:
    return dt.datetime.fromtimestamp(time.time() if epoch is None else epoch, dt.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def _epoch(stamp: str) -> float:
    # A "+" in a query string arrives as a space.
    parsed = dt.datetime.fromisoformat(stamp.strip().replace(" ", "+"))
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).timestamp()


def _in_range(stamp: str, expr: str) -> bool:
    """GitHub's date filter syntax: X..Y, >=X, >X, <=X, <X, or a day."""
    t = _epoch(stamp)
    if ".." in expr:
        low, high = expr.split("..", 1)
        return (low == "*" or t >= _epoch(low)) and (high == "*" or t <= _epoch(high))
    for prefix, test in (
        (">=", float.__ge__),
        ("<=", float.__le__),
        (">", float.__gt__),
        ("<", float.__lt__),
    ):
        if expr.startswith(prefix):
            return test(t, _epoch(expr[len(prefix) :]))
    return _epoch(expr[:10]) <= t < _epoch(expr[:10]) + 86400


def _node_id(kind: str, key: Any) -> str:
    return base64.b64encode(f"{kind}{key}".encode()).decode()


def _b64(data: bytes) -> str:
    """Base64 in 60-character lines, as GitHub sends blob and file content."""
    text = base64.b64encode(data).decode()
    return "\n".join(text[i : i + 60] for i in range(0, len(text), 60))


def _within_diff_limit(entries: list[dict]) -> list[dict]:
    """A response's file entries as GitHub sends them: once their patches add up to DIFF_LINES, a file's
    patch is left out and its line counts are 0 (github.com/orgs/community/discussions/213491)."""
    kept, lines = [], 0
    for entry in entries:
        patch_lines = entry["patch"].count("\n") + 1 if "patch" in entry else 0
        if lines + patch_lines > DIFF_LINES:
            entry = {k: v for k, v in entry.items() if k != "patch"} | {
                "additions": 0,
                "deletions": 0,
                "changes": 0,
            }
        else:
            lines += patch_lines
        kept.append(entry)
    return kept


def _lookup(git: pygit2.Repository, spec: str) -> pygit2.Object | None:
    """The object a sha or ref name points at (GitHub accepts both in paths), or None."""
    try:
        return git.revparse_single(spec)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _object(git: pygit2.Repository, sha: str | None) -> pygit2.Object | None:
    """The object with exactly this full sha (body fields take only SHAs), or None."""
    return git.get(sha) if sha and re.fullmatch(r"[0-9a-f]{40}", sha) else None


def _peel(obj: pygit2.Object | None, kind: type) -> Any:
    try:
        return obj.peel(kind) if obj is not None else None
    except (ValueError, pygit2.GitError):
        return None


def _flatten(
    git: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> dict[str, tuple[pygit2.Oid, int]]:
    """{path: (oid, mode)} for every non-tree entry below ``tree``."""
    flat = {}
    for entry in tree:
        if entry.type_str == "tree":
            flat.update(_flatten(git, git[entry.id], f"{prefix}{entry.name}/"))
        else:
            flat[prefix + entry.name] = (entry.id, int(entry.filemode))
    return flat


def _drop(flat: dict[str, Any], path: str) -> None:
    """Remove ``path``, everything below it, and files in the way of it becoming a directory."""
    for key in [k for k in flat if k == path or k.startswith(path + "/") or path.startswith(k + "/")]:
        del flat[key]


def _build_tree(git: pygit2.Repository, flat: dict[str, tuple[pygit2.Oid, int]]) -> pygit2.Oid:
    nested: dict[str, Any] = {}
    for path, leaf in flat.items():
        *dirs, name = path.split("/")
        node = nested
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = leaf

    def write(node: dict[str, Any]) -> pygit2.Oid:
        builder = git.TreeBuilder()
        for name, value in node.items():
            if isinstance(value, dict):
                builder.insert(name, write(value), 0o040000)
            else:
                builder.insert(name, *value)
        return builder.write()

    return write(nested)


def _signature_json(sig: pygit2.Signature) -> dict:
    return {"name": sig.name, "email": sig.email, "date": iso(sig.time)}


def _openapi_to_jsonschema(node: Any) -> Any:
    """Turn OpenAPI 3.0's ``nullable: true`` into JSON Schema null types, leaving examples alone."""
    if isinstance(node, list):
        return [_openapi_to_jsonschema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: v if k in ("example", "examples") else _openapi_to_jsonschema(v)
        for k, v in node.items()
        if k != "nullable"
    }
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [{"type": "null"}, out]}
    return out


class Spec:
    """The operations of github-subset.json: routing by path template and jsonschema validation."""

    def __init__(self, document: dict):
        self.doc = _openapi_to_jsonschema(document)
        routes = []
        for template, item in self.doc["paths"].items():
            parts = re.split(r"\{(\w+)\}", template)  # literal, name, literal, ...
            regex = "".join(
                re.escape(part) if i % 2 == 0 else f"(?P<{part}>{'.+' if part in GREEDY_PARAMS else '[^/]+'})"
                for i, part in enumerate(parts)
            )
            routes.append((len("".join(parts[::2])), re.compile(regex), item))
        # Most literal characters first, so fixed segments win over parameters.
        self.routes = [(regex, item) for _, regex, item in sorted(routes, key=lambda r: -r[0])]
        self._validators: dict[int, jsonschema.Draft7Validator] = {}

    def resolve(self, node: dict) -> dict:
        while "$ref" in node:
            node = functools.reduce(lambda n, key: n[key], node["$ref"][2:].split("/"), self.doc)
        return node

    def match(self, method: str, raw_path: str) -> tuple[dict | None, dict[str, str]]:
        for regex, item in self.routes:
            found = regex.fullmatch(raw_path)
            if found and method.lower() in item:
                return item[method.lower()], {
                    k: urllib.parse.unquote(v) for k, v in found.groupdict().items()
                }
        return None, {}

    def errors(self, schema: dict, value: Any, where: str) -> list[str]:
        validator = self._validators.get(id(schema))
        if validator is None:
            # Embedding the components lets "#/components/..." refs resolve against this schema.
            validator = jsonschema.Draft7Validator({**schema, "components": self.doc["components"]})
            self._validators[id(schema)] = validator
        # Messages quote the whole instance; keep long ones readable by naming the failed keyword.
        return [
            f"{'.'.join([where, *map(str, e.absolute_path)])}: "
            + (e.message if len(e.message) < 200 else f"fails {e.validator}: ...{e.message[-60:]}")
            for e in validator.iter_errors(value)
        ]

    def check_request(self, op: dict, params: dict, query: dict, body: Any) -> list[str]:
        problems = []
        declared = [self.resolve(p) for p in op.get("parameters", [])]
        for param in declared:
            source = params if param["in"] == "path" else query
            if param["name"] not in source:
                if param.get("required"):
                    problems.append(f"missing {param['in']} parameter {param['name']}")
                continue
            value = _coerce(source[param["name"]], param["schema"])
            problems += self.errors(param["schema"], value, f"{param['in']} parameter {param['name']}")
        known = {p["name"] for p in declared if p["in"] == "query"}
        problems += [f"undocumented query parameter {name}" for name in query if name not in known]
        request_body = self.resolve(op["requestBody"]) if "requestBody" in op else None
        if request_body is None:
            if body not in (None, {}):
                problems.append("this operation takes no request body")
        elif body is None:
            if request_body.get("required"):
                problems.append("missing JSON request body")
        else:
            problems += self.errors(
                self.resolve(request_body["content"]["application/json"]["schema"]), body, "body"
            )
        return problems

    def missing(self, schema: dict, value: Any) -> list[str]:
        """Required fields absent from a response (top level, or each item of an array)."""
        schema = self.resolve(schema)
        alternatives = schema.get("oneOf") or schema.get("anyOf")
        if alternatives:
            return min((self.missing(s, value) for s in alternatives), key=len)
        if schema.get("type") == "array":
            if not isinstance(value, list):
                return ["(an array)"]
            return [
                f"[{i}].{m}"
                for i, item in enumerate(value)
                for m in self.missing(schema.get("items", {}), item)
            ]
        if isinstance(value, dict):
            return [key for key in schema.get("required", []) if key not in value]
        return []


def _coerce(value: str, schema: dict) -> Any:
    """A path/query string as the JSON type its schema expects, so jsonschema can check it."""
    types = [schema.get("type"), *(s.get("type") for s in schema.get("oneOf", []))]
    if "integer" in types and re.fullmatch(r"-?\d+", value):
        return int(value)
    if "boolean" in types and value in ("true", "false"):
        return value == "true"
    return value


class HTTPError(Exception):
    """A GitHub error answer raised inside a handler; ``violation`` also records it as a contract breach."""

    def __init__(self, status: int, message: str, errors: list | None = None, violation: bool = False):
        super().__init__(message)
        self.status, self.violation = status, violation
        self.body: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": str(status)}
        if errors:
            self.body["errors"] = errors


def not_found() -> HTTPError:
    return HTTPError(404, "Not Found")


@dataclass
class Call:
    """One routed, validated request as a handler sees it."""

    params: dict[str, str]
    query: dict[str, str]
    body: Any
    headers: Any
    url: str  # absolute URL without the query, for Link headers
    repo: dict = field(default_factory=dict)  # set for /repos/{owner}/{repo}/... paths

    @property
    def api(self) -> str:
        return self.url.split("/repos/")[0] + f"/repos/{self.repo['full_name']}"


@dataclass
class RandomFaults:
    """Faults at random, reproducible from `seed`: `rate` of all requests get a 502, a 503 or a secondary
    rate limit instead of being carried out; `lost_rate` of the POSTs left are carried out and then lose
    their answer (the connection closes, or a 502 comes back). `injected` counts them by kind."""

    rate: float
    lost_rate: float
    seed: int
    retry_after: int = 1
    injected: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def pick(self, method: str) -> str | None:
        """The kind of fault this request gets, or None."""
        if self._random.random() < self.rate:
            kind = self._random.choice(FAULT_KINDS)
        elif method == "POST" and self._random.random() < self.lost_rate:
            kind = self._random.choice(LOST_ANSWER_KINDS)
        else:
            return None
        self.injected[kind] += 1
        return kind

    def answer(self, kind: str) -> tuple[int, dict, dict]:
        if kind == "rate_limit":
            return 403, dict(SECONDARY_RATE_LIMIT), {"Retry-After": str(self.retry_after)}
        status = 503 if kind == "503" else 502
        return status, {"message": HTTPStatus(status).phrase, "documentation_url": DOCS}, {}


@functools.cache
def _default_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


class FakeGitHub:
    """GitHub's REST API for one App installation, on a random local port."""

    def __init__(
        self,
        app_id: int | str = 4242,
        private_key_pem: str | None = None,
        *,
        client_id: str = "Iv1.fakeapp",
        installation_id: int = 1,
        token_ttl: int = 3600,
        bot_login: str = "llama-bot[bot]",
    ):
        self.app_id, self.client_id, self.installation_id = app_id, client_id, installation_id
        self.private_key_pem = private_key_pem or _default_key()
        self._public_key = serialization.load_pem_private_key(
            self.private_key_pem.encode(), None
        ).public_key()
        self.token_ttl, self.bot_login = token_ttl, bot_login
        self.spec = Spec(_load("openapi/github-subset.json"))
        # The port is taken now so that URLs in objects built before start() are right.
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # `go_online` binds the port again
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self.violations: list[str] = []
        self.requests: list[dict] = []
        self.tokens_issued = 0
        self.repos: dict[str, dict] = {}  # full_name -> {owner, name, full_name, git, default_branch}
        self.pulls: dict[tuple[str, int], dict] = {}
        self.comments: dict[int, dict] = {}
        self.issues: dict[tuple[str, int], dict] = {}  # plain issues (pull requests are in `pulls`)
        self.reactions: dict[int, list[dict]] = {}  # comment id -> reactions
        self.check_runs: dict[int, dict] = {}
        self.check_run_requests: list[dict] = []  # {"method", "id", "body"}
        self.annotations: dict[int, list[dict]] = {}  # check run id -> all annotations sent
        self.permissions: dict[tuple[str, str], str] = {}  # (full_name, login) -> role
        self.workflows: dict[int, dict] = {}  # id -> {repo, file, dispatchable, workflow}
        self.workflow_runs: dict[int, dict] = {}
        self.dispatches: list[dict] = []
        self.opened_pulls: list[int] = []  # the numbers of the pull requests the App opened
        # The App manifest flow: each form GitHub's web pages took ({"manifest", "org", "state", "code"}), the
        # one-time codes not exchanged yet, the Apps the exchanges made (with their secrets), the signed-in user.
        self.manifests: list[dict] = []
        self.manifest_codes: dict[str, dict] = {}
        self.apps_created: list[dict] = []
        self.web_login = "octocat"
        self.return_run_details = True
        self.list_sizes = True  # tree listings give each blob's size (the description makes it optional)
        self.clock_offset = 0.0  # GitHub's clock minus the machine's (`advance`)
        self.protected: set[tuple[str, str]] = set()  # (full_name, branch) with branch protection
        self.pushed_at: dict[str, str] = {}  # full_name -> its last push, once the fake saw one
        self.rate_limit, self.rate_used, self.rate_reset = 5000, 0, int(time.time()) + 3600
        self._tokens: dict[str, float] = {}  # token -> expiry (epoch)
        self._faults: list[dict] = []
        self.random_faults: RandomFaults | None = None  # off unless `inject_faults`
        self._delays: list[tuple[str, float]] = []
        self._ids = itertools.count(1001)
        self.artifacts: dict[int, dict] = {}  # artifact id -> the artifact as GitHub lists it
        self.artifact_blobs: dict[int, bytes] = {}  # artifact id -> its zip archive
        self.blob_requests: list[dict] = []  # the headers of each download of an archive's address
        self._tempdirs: list[str] = []
        self._runner: web.AppRunner | None = None

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> Self:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for form in MANIFEST_FORMS:
            app.router.add_post(form, self._manifest_form)
        app.router.add_get("/_blobs/artifacts/{id}", self._artifact_blob)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # closing waits at most a second for held requests (`delay`) before cancelling them
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.SockSite(self._runner, self._socket).start()
        return self

    async def close(self) -> None:
        if self._runner:
            await self._runner.cleanup()
            self._runner = None
        self._socket.close()
        for path in self._tempdirs:
            shutil.rmtree(path, ignore_errors=True)

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- test controls -------------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        path_regex: str,
        status: int = 502,
        times: int = 1,
        headers: dict | None = None,
        body: Any = None,
        after: bool = False,
    ) -> None:
        """Answer the next ``times`` requests matching method ("*" = any) and path with an error; with
        ``after``, carry each out first (GitHub did it, then the answer was lost on its way back)."""
        if body is None:
            body = {"message": HTTPStatus(status).phrase, "documentation_url": DOCS}
        self._faults.append(
            {
                "method": method.upper(),
                "pattern": path_regex,
                "status": status,
                "times": times,
                "headers": {k: str(v) for k, v in (headers or {}).items()},
                "body": body,
                "after": after,
            }
        )

    def inject_faults(
        self, rate: float, *, lost_rate: float = 0.0, seed: int = 0, retry_after: int = 1
    ) -> RandomFaults:
        """From now on, fail a random `rate` of requests and lose the answer of `lost_rate` of the POSTs
        after carrying them out (see `RandomFaults`); the requests are still checked against the
        description. Returns the counters."""
        self.random_faults = RandomFaults(rate, lost_rate, seed, retry_after)
        return self.random_faults

    def delay(self, path_regex: str, seconds: float) -> None:
        """Hold every request whose path matches for ``seconds`` (for timeout tests)."""
        self._delays.append((path_regex, seconds))

    def clear_delays(self) -> None:
        self._delays.clear()

    def clear_faults(self) -> None:
        """Forget the errors `fail` set up that have not been answered yet."""
        self._faults.clear()

    async def go_offline(self) -> None:
        """Stop listening: every connection is refused (open ones are closed) until `go_online`."""
        if self._runner:
            await self._runner.cleanup()
            self._runner = None
        self._socket.close()

    async def go_online(self) -> None:
        """Listen again on the same port, with everything the fake held before."""
        port = int(self.url.rsplit(":", 1)[1])
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", port))
        await self.start()

    def advance(self, seconds: float) -> None:
        """Move GitHub's clock on (its times are whole seconds: a comment written a second after a push is
        later than it, one in the same second is not)."""
        self.clock_offset += seconds

    def now(self) -> float:
        """GitHub's time, epoch seconds."""
        return time.time() + self.clock_offset

    def _iso(self) -> str:
        return iso(self.now())

    def protect(self, owner: str, name: str, branch: str) -> None:
        """Give `branch` protection: GET .../branches/{branch} says so and ref updates to it are refused."""
        self.protected.add((f"{owner}/{name}", branch))

    def expire_all_tokens(self) -> None:
        """Make every installation token issued so far expired, as after an hour."""
        self._tokens = dict.fromkeys(self._tokens, 0.0)

    # -- state setup ---------------------------------------------------------------------------------

    def add_repo(
        self,
        owner: str,
        name: str,
        git_dir: pygit2.Repository | str | Path | None = None,
        default_branch: str = "main",
    ) -> dict:
        """Register owner/name backed by a pygit2 repository (None: a new empty bare one); returns its JSON."""
        if git_dir is None:
            path = tempfile.mkdtemp(prefix="fakegithub-")
            self._tempdirs.append(path)
            git = pygit2.init_repository(path, bare=True)
        else:
            git = git_dir if isinstance(git_dir, pygit2.Repository) else pygit2.Repository(str(git_dir))
        full = f"{owner}/{name}"
        self.repos[full] = {
            "owner": owner,
            "name": name,
            "full_name": full,
            "git": git,
            "default_branch": default_branch,
        }
        return self._repo_json(full)

    def add_pull(
        self,
        owner: str,
        name: str,
        number: int,
        head_sha: str,
        head_ref: str,
        base_ref: str = "main",
        base_sha: str | None = None,
        head_repo_full_name: str | None = None,
        maintainer_can_modify: bool = False,
        user_login: str = "contributor",
        state: str = "open",
        title: str | None = None,
        body: str = "",
        user_type: str = "User",
    ) -> dict:
        """Open PR ``number``; its head commits must be in the base repository's git (GitHub keeps them there)."""
        full = f"{owner}/{name}"
        git = self.repos[full]["git"]
        base_sha = base_sha or str(git.references[f"refs/heads/{base_ref}"].target)
        head_full = head_repo_full_name or full
        template = _load("payloads/pull_request.opened.json")["pull_request"]
        text = json.dumps({k: v for k, v in template.items() if k not in ("head", "base", "user")})
        for old, value in [
            ("https://api.github.com", self.url),
            ("Codertocat/Hello-World", full),
            ("/pull/2", f"/pull/{number}"),
            ("/pulls/2", f"/pulls/{number}"),
            ("/issues/2", f"/issues/{number}"),
            (template["head"]["sha"], head_sha),
        ]:
            text = text.replace(old, value)
        now = self._iso()
        pr = json.loads(text)
        pr.update(
            id=zlib.crc32(f"{full}#{number}".encode()),
            node_id=_node_id("PR", number),
            number=number,
            state=state,
            title=title or f"Pull request {number}",
            body=body,
            user=self._user(user_login, user_type),
            created_at=now,
            updated_at=now,
            closed_at=None if state == "open" else now,
            head=self._branch_json(head_full, head_ref, head_sha, fork=head_full != full),
            base=self._branch_json(full, base_ref, base_sha),
            mergeable=True,
            mergeable_state="clean",
            maintainer_can_modify=maintainer_can_modify,
            author_association="CONTRIBUTOR",
        )
        self.pulls[(full, number)] = pr
        self._set_head(pr, head_sha)  # the branch was pushed before the PR was opened
        return pr

    def set_pull_head(self, owner: str, name: str, number: int, sha: str) -> None:
        """Simulate a push to the PR's head branch: move head.sha and the branch ref if the head repo is known,
        and the head repository's `pushed_at`."""
        pr = self.pulls[(f"{owner}/{name}", number)]
        self._set_head(pr, sha)
        self._pushed(pr["head"]["repo"]["full_name"])

    def _set_head(self, pr: dict, sha: str) -> None:
        self._move_head(pr, sha)
        head = self.repos.get(pr["head"]["repo"]["full_name"])
        if head and _object(head["git"], sha):
            head["git"].references.create(f"refs/heads/{pr['head']['ref']}", sha, force=True)

    def _pushed(self, full_name: str) -> None:
        """A push to `full_name`: its `pushed_at` is now, in the repository JSON of every PR too."""
        self.pushed_at[full_name] = now = self._iso()
        for pr in self.pulls.values():
            for side in ("head", "base"):
                repo = pr[side].get("repo")
                if repo and repo["full_name"] == full_name:
                    repo["pushed_at"] = now

    def add_comment(
        self,
        owner: str,
        name: str,
        issue_number: int,
        body: str,
        user_login: str = "contributor",
        user_type: str = "User",
    ) -> dict:
        """Put a comment on an issue or PR, by default as someone other than the bot."""
        full = f"{owner}/{name}"
        api, cid, now = f"{self.url}/repos/{full}", next(self._ids), self._iso()
        kind = "pull" if (full, issue_number) in self.pulls else "issues"
        comment = {
            "id": cid,
            "node_id": _node_id("IC", cid),
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"https://github.com/{full}/{kind}/{issue_number}#issuecomment-{cid}",
            "body": body,
            "user": self._user(user_login, user_type),
            "created_at": now,
            "updated_at": now,
            "issue_url": f"{api}/issues/{issue_number}",
            "author_association": "NONE" if user_type == "Bot" else "CONTRIBUTOR",
        }
        self.comments[cid] = comment
        return comment

    def _next_number(self, full: str) -> int:
        """The number the next issue or pull request of `full` gets: past every one a PR, an issue or a
        comment names."""
        taken = [n for (f, n) in [*self.pulls, *self.issues] if f == full]
        taken += [
            int(c["issue_url"].rsplit("/", 1)[1])
            for c in self.comments.values()
            if f"/repos/{full}/" in c["issue_url"]
        ]
        return max(taken, default=0) + 1

    def add_issue(
        self,
        owner: str,
        name: str,
        title: str,
        body: str = "",
        user_login: str = "contributor",
        user_type: str = "User",
        labels: tuple[str, ...] = (),
    ) -> dict:
        """Open a plain issue, by default as someone other than the bot."""
        full = f"{owner}/{name}"
        number, now = self._next_number(full), self._iso()
        issue = copy.deepcopy(self._example("issue"))
        text = json.dumps(issue).replace(
            "https://api.github.com/repos/octocat/Hello-World", f"{self.url}/repos/{full}"
        )
        issue = json.loads(text.replace("octocat/Hello-World/issues/1347", f"{full}/issues/{number}"))
        issue.update(
            id=zlib.crc32(f"{full}#issue{number}".encode()),
            node_id=_node_id("I", f"{full}#{number}"),
            url=f"{self.url}/repos/{full}/issues/{number}",
            html_url=f"https://github.com/{full}/issues/{number}",
            number=number,
            title=title,
            body=body,
            user=self._user(user_login, user_type),
            labels=[self._label(full, label) for label in labels],
            assignee=None,
            assignees=[],
            milestone=None,
            pull_request=None,
            closed_at=None,
            closed_by=None,
            created_at=now,
            updated_at=now,
            comments=0,
        )
        issue.pop("pull_request")
        self.issues[(full, number)] = issue
        return issue

    def _label(self, full: str, name: str) -> dict:
        return {
            "id": zlib.crc32(f"{full}:{name}".encode()),
            "node_id": _node_id("LA", f"{full}:{name}"),
            "url": f"{self.url}/repos/{full}/labels/{urllib.parse.quote(name)}",
            "name": name,
            "description": None,
            "color": "ededed",
            "default": False,
        }

    def add_workflow(self, owner: str, name: str, file_name: str, dispatchable: bool = True) -> dict:
        """Register .github/workflows/<file_name>; ``dispatchable`` = it has an ``on: workflow_dispatch``."""
        full, wid, now = f"{owner}/{name}", next(self._ids), self._iso()
        branch = self.repos[full]["default_branch"]
        workflow = {
            "id": wid,
            "node_id": _node_id("W", wid),
            "name": file_name.rsplit(".", 1)[0],
            "path": f".github/workflows/{file_name}",
            "state": "active",
            "created_at": now,
            "updated_at": now,
            "url": f"{self.url}/repos/{full}/actions/workflows/{wid}",
            "html_url": f"https://github.com/{full}/blob/{branch}/.github/workflows/{file_name}",
            "badge_url": f"https://github.com/{full}/workflows/{file_name}/badge.svg",
        }
        self.workflows[wid] = {
            "repo": full,
            "file": file_name,
            "dispatchable": dispatchable,
            "workflow": workflow,
        }
        return workflow

    def add_artifact(self, run_id: int, name: str, archive: bytes, expired: bool = False) -> dict:
        """An artifact uploaded by a run: `archive` is what downloading it gives (a zip archive)."""
        run, aid = self.workflow_runs[run_id], next(self._ids)
        api = run["url"].split("/actions/runs/")[0]
        artifact = {
            "id": aid,
            "node_id": f"A_{aid}",
            "name": name,
            "size_in_bytes": len(archive),
            "url": f"{api}/actions/artifacts/{aid}",
            "archive_download_url": f"{api}/actions/artifacts/{aid}/zip",
            "expired": expired,
            "created_at": self._iso(),
            "expires_at": None,
            "updated_at": self._iso(),
            "digest": None,
            "workflow_run": {"id": run_id, "head_sha": run["head_sha"]},
            "run_id": run_id,
        }
        self.artifacts[aid], self.artifact_blobs[aid] = artifact, archive
        return artifact

    async def _artifact_blob(self, request: web.Request) -> web.Response:
        """The short-lived address GitHub redirects an archive download to: another origin than the API's,
        which must never be sent the installation token."""
        self.blob_requests.append(dict(request.headers))
        if "Authorization" in request.headers:
            self.violations.append("an artifact's download address was sent the Authorization header")
        blob = self.artifact_blobs.get(int(request.match_info["id"]))
        if blob is None:
            return web.Response(status=404)
        return web.Response(body=blob, content_type="application/zip")

    # -- webhook payloads built from the fake's state ------------------------------------------------

    def workflow_run_payload(
        self, run_id: int, action: str, status: str, conclusion: str | None = None
    ) -> dict:
        """A workflow_run delivery for a dispatched run; also moves the run to that status."""
        run = self.workflow_runs[run_id]
        run.update(status=status, conclusion=conclusion, updated_at=self._iso())
        workflow = self.workflows[run["workflow_id"]]
        data = payload(
            "workflow_run.completed",
            action=action,
            workflow_run=copy.deepcopy(run),
            workflow=copy.deepcopy(workflow["workflow"]),
            repository=self._repo_json(workflow["repo"]),
            sender=self._user(self.bot_login, "Bot"),
            installation=self._installation_ref(),
        )
        data.pop("organization", None)
        return data

    # -- request handling ----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw_path = request.raw_path.split("?", 1)[0]
        path = urllib.parse.unquote(raw_path)
        query = dict(request.query)
        raw_body = await request.read()
        body, bad_json = None, False
        if raw_body.strip():
            try:
                body = json.loads(raw_body)
            except ValueError:
                bad_json = True
        record = {"method": request.method, "path": path, "query": query, "json": body, "status": None}
        self.requests.append(record)
        for pattern, seconds in self._delays:
            if re.search(pattern, path):
                await asyncio.sleep(seconds)
        fault = self._take_fault(request.method, path)
        chance = self.random_faults.pick(request.method) if self.random_faults and not fault else None
        if not fault or fault["after"]:
            status, data, headers = self._route(
                request,
                raw_path,
                query,
                body,
                bad_json,
                carry_out=chance is None or chance in LOST_ANSWER_KINDS,
            )
        if fault:
            status, data, headers = fault["status"], fault["body"], fault["headers"]
        elif chance == "closed_after_write":
            record["status"] = "closed"
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=204)  # never sent: the connection is gone
        elif chance is not None:
            assert self.random_faults is not None
            status, data, headers = self.random_faults.answer(
                "502" if chance == "502_after_write" else chance
            )
        record["status"] = status
        headers = {**self._rate_headers(), **headers}
        if data is None:
            return web.Response(status=status, headers=headers)
        if isinstance(data, (bytes, str)):
            return web.Response(
                status=status, body=data.encode() if isinstance(data, str) else data, headers=headers
            )
        return web.json_response(data, status=status, headers=headers)

    def _take_fault(self, method: str, path: str) -> dict | None:
        for fault in self._faults:
            if fault["times"] > 0 and fault["method"] in ("*", method) and re.search(fault["pattern"], path):
                fault["times"] -= 1
                return fault
        return None

    def _route(
        self,
        request: web.Request,
        raw_path: str,
        query: dict,
        body: Any,
        bad_json: bool,
        carry_out: bool = True,
    ) -> tuple[int, Any, dict]:
        """Validate the request and, with `carry_out`, answer it (else only its violations are kept)."""
        where = f"{request.method} {urllib.parse.unquote(raw_path)}"
        op, params = self.spec.match(request.method, raw_path)
        if op is None:
            self.violations.append(f"{where}: no such operation in github-subset.json")
            return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
        problem = self._auth_problem(op["operationId"], request.headers.get("Authorization", ""))
        if problem:
            return 401, {"message": problem, "documentation_url": DOCS}, {}
        if op["operationId"] != "rate-limit/get":
            self.rate_used += 1
        if bad_json:
            self.violations.append(f"{where}: request body is not JSON")
            return 400, {"message": "Problems parsing JSON", "documentation_url": DOCS}, {}
        problems = self.spec.check_request(op, params, query, body)
        if problems:
            self.violations += [f"{where}: {p}" for p in problems]
            return (
                422,
                {
                    "message": "Invalid request.\n\n" + "\n".join(problems),
                    "documentation_url": DOCS,
                    "status": "422",
                },
                {},
            )
        if not carry_out:
            return 0, None, {}
        call = Call(params, query, body, request.headers, self.url + raw_path)
        handler = getattr(self, "op_" + re.sub(r"\W", "_", op["operationId"]))
        try:
            if "owner" in params:
                if f"{params['owner']}/{params['repo']}" not in self.repos:
                    raise not_found()
                call.repo = self.repos[f"{params['owner']}/{params['repo']}"]
            status, data, *extra = handler(call)
        except HTTPError as error:
            if error.violation:
                self.violations.append(f"{where}: {error.body['message']}")
            return error.status, error.body, {}
        self._check_response(where, op, status, data)
        return status, data, extra[0] if extra else {}

    def _auth_problem(self, operation_id: str, header: str) -> str | None:
        """Why GitHub would answer 401, or None."""
        scheme, _, credential = header.partition(" ")
        if operation_id in NO_AUTH_OPERATIONS:
            return None
        if operation_id in JWT_OPERATIONS:
            if scheme.lower() != "bearer":
                return "A JSON web token could not be decoded"
            try:
                claims = jwt.decode(
                    credential,
                    self._public_key,
                    algorithms=["RS256"],
                    options={"require": ["iat", "exp", "iss"]},
                )
            except jwt.PyJWTError as error:
                return f"A JSON web token could not be decoded ({error})"
            if str(claims["iss"]) not in (str(self.app_id), self.client_id):
                return f"Integration {claims['iss']} not found"
            if claims["exp"] - claims["iat"] > JWT_MAX_LIFETIME:
                return "'Expiration time' claim ('exp') is too far in the future"
            return None
        if scheme.lower() in ("token", "bearer") and self._tokens.get(credential, 0) > time.time():
            return None
        return "Bad credentials"

    def _check_response(self, where: str, op: dict, status: int, data: Any) -> None:
        """Keep the fake honest: its answers must use documented codes and carry the required fields."""
        documented = op["responses"].get(str(status))
        if documented is None:
            self.violations.append(f"{where}: fake answered undocumented status {status}")
            return
        schema = self.spec.resolve(documented).get("content", {}).get("application/json", {}).get("schema")
        if schema and data is not None and not isinstance(data, bytes):
            missing = self.spec.missing(schema, data)
            if missing:
                self.violations.append(f"{where}: fake response lacks required {', '.join(missing[:10])}")

    def _rate_headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(self.rate_limit),
            "x-ratelimit-remaining": str(max(0, self.rate_limit - self.rate_used)),
            "x-ratelimit-reset": str(self.rate_reset),
            "x-ratelimit-used": str(self.rate_used),
            "x-ratelimit-resource": "core",
        }

    def _paginate(self, call: Call, items: list) -> tuple[list, dict]:
        """One page of ``items`` and GitHub's Link header (next/last, first/prev)."""
        per_page = min(max(int(call.query.get("per_page", 30)), 1), 100)
        page = max(int(call.query.get("page", 1)), 1)
        last = max(1, -(-len(items) // per_page))

        def link(number: int, rel: str) -> str:
            query = urllib.parse.urlencode({**call.query, "per_page": per_page, "page": number})
            return f'<{call.url}?{query}>; rel="{rel}"'

        links = [link(page + 1, "next"), link(last, "last")] if page < last else []
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        return items[(page - 1) * per_page : page * per_page], {"Link": ", ".join(links)} if links else {}

    # -- JSON builders -------------------------------------------------------------------------------

    def _user(self, login: str, user_type: str = "User") -> dict:
        template = json.dumps(
            _load("openapi/github-subset.json")["components"]["examples"]["issue-comment"]["value"]["user"]
        )
        user = json.loads(template.replace("octocat", login).replace("https://api.github.com", self.url))
        user.update(id=zlib.crc32(login.encode()), node_id=_node_id("U", login), type=user_type)
        return user

    def _repo_json(self, full_name: str, fork: bool = False) -> dict:
        template = json.dumps(_load("payloads/pull_request.opened.json")["repository"])
        repo = json.loads(
            template.replace("Codertocat/Hello-World", full_name).replace("https://api.github.com", self.url)
        )
        owner, name = full_name.split("/")
        known = self.repos.get(full_name)
        repo.update(
            id=zlib.crc32(full_name.encode()),
            node_id=_node_id("R", full_name),
            name=name,
            owner=self._user(owner),
            fork=fork,
            default_branch=known["default_branch"] if known else "main",
        )
        if full_name in self.pushed_at:
            repo["pushed_at"] = self.pushed_at[full_name]
        return repo

    def _branch_json(self, full_name: str, ref: str, sha: str, fork: bool = False) -> dict:
        owner = full_name.split("/")[0]
        return {
            "label": f"{owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self._user(owner),
            "repo": self._repo_json(full_name, fork),
        }

    def _installation_ref(self) -> dict:
        return {"id": self.installation_id, "node_id": _node_id("I", self.installation_id)}

    def _app_json(self) -> dict:
        app = copy.deepcopy(self._example("integration"))
        slug = self.bot_login.removesuffix("[bot]")
        app.update(
            id=int(self.app_id),
            slug=slug,
            name=slug,
            client_id=self.client_id,
            html_url=f"https://github.com/apps/{slug}",
            permissions=dict(DEFAULT_PERMISSIONS),
        )
        return app

    def _example(self, name: str) -> Any:
        return _load("openapi/github-subset.json")["components"]["examples"][name]["value"]

    def _move_head(self, pr: dict, sha: str) -> None:
        pr["head"]["sha"], pr["updated_at"] = sha, self._iso()
        pr["statuses_url"] = pr["_links"]["statuses"]["href"] = (
            pr["url"].split("/pulls/")[0] + f"/statuses/{sha}"
        )
        base = self.repos.get(pr["base"]["repo"]["full_name"])
        if base and _object(base["git"], sha):
            base["git"].references.create(f"refs/pull/{pr['number']}/head", sha, force=True)

    def _ref_moved(self, full_name: str, ref: str, sha: str) -> None:
        """A branch write is a push: it moves the head of every open PR from that branch."""
        self._pushed(full_name)
        for pr in self.pulls.values():
            if (
                pr["state"] == "open"
                and pr["head"]["repo"]["full_name"] == full_name
                and f"refs/heads/{pr['head']['ref']}" == ref
            ):
                self._move_head(pr, sha)

    def _diff_entries(self, call: Call, base_sha: str, head_sha: str) -> list[dict]:
        """GitHub's file list: the three-dot diff from the merge base to head."""
        git = call.repo["git"]
        base, head = (
            _peel(_lookup(git, base_sha), pygit2.Commit),
            _peel(_lookup(git, head_sha), pygit2.Commit),
        )
        if base is None or head is None:
            raise not_found()
        merge_base = git.merge_base(base.id, head.id)
        diff = git.diff(git[merge_base] if merge_base else base, head)
        diff.find_similar()
        full, entries = call.repo["full_name"], []
        for patch in diff:
            delta = patch.delta
            _, additions, deletions = patch.line_stats
            status = DIFF_STATUS.get(delta.status_char(), "changed")
            name = delta.new_file.path
            entry = {
                "sha": str(delta.old_file.id if status == "removed" else delta.new_file.id),
                "filename": name,
                "status": status,
                "additions": additions,
                "deletions": deletions,
                "changes": additions + deletions,
                "blob_url": f"https://github.com/{full}/blob/{head.id}/{name}",
                "raw_url": f"https://github.com/{full}/raw/{head.id}/{name}",
                "contents_url": f"{call.api}/contents/{name}?ref={head.id}",
            }
            text = patch.text or ""
            if not delta.is_binary and "\n@@" in text:
                entry["patch"] = text[text.index("\n@@") + 1 :].rstrip("\n")
            if status == "renamed":
                entry["previous_filename"] = delta.old_file.path
            entries.append(entry)
        return entries

    def _commit_json(self, call: Call, commit_obj: pygit2.Commit) -> dict:
        """The REST ``commit`` object (compare)."""
        sha, html = str(commit_obj.id), f"https://github.com/{call.repo['full_name']}"
        git_commit = self._git_commit_json(call, commit_obj)
        return {
            "url": f"{call.api}/commits/{sha}",
            "sha": sha,
            "node_id": git_commit["node_id"],
            "html_url": f"{html}/commit/{sha}",
            "comments_url": f"{call.api}/commits/{sha}/comments",
            "commit": {
                "url": git_commit["url"],
                "author": git_commit["author"],
                "committer": git_commit["committer"],
                "message": git_commit["message"],
                "comment_count": 0,
                "tree": git_commit["tree"],
                "verification": git_commit["verification"],
            },
            "author": None,
            "committer": None,
            "parents": git_commit["parents"],
        }

    def _git_commit_json(self, call: Call, commit_obj: pygit2.Commit) -> dict:
        sha, html = str(commit_obj.id), f"https://github.com/{call.repo['full_name']}"
        return {
            "sha": sha,
            "node_id": _node_id("C", sha),
            "url": f"{call.api}/git/commits/{sha}",
            "html_url": f"{html}/commit/{sha}",
            "author": _signature_json(commit_obj.author),
            "committer": _signature_json(commit_obj.committer),
            "message": commit_obj.message,
            "tree": {"sha": str(commit_obj.tree_id), "url": f"{call.api}/git/trees/{commit_obj.tree_id}"},
            "parents": [
                {"sha": str(p), "url": f"{call.api}/git/commits/{p}", "html_url": f"{html}/commit/{p}"}
                for p in commit_obj.parent_ids
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def _tree_json(self, call: Call, tree: pygit2.Tree, recursive: bool) -> dict:
        git = call.repo["git"]

        def entries(node: pygit2.Tree, prefix: str) -> list[dict]:
            out = []
            for entry in node:
                item = {
                    "path": prefix + entry.name,
                    "mode": format(int(entry.filemode), "06o"),
                    "type": entry.type_str,
                    "sha": str(entry.id),
                }
                if entry.type_str == "blob" and self.list_sizes:
                    item["size"] = git[entry.id].size
                if entry.type_str != "commit":
                    item["url"] = f"{call.api}/git/{entry.type_str}s/{entry.id}"
                out.append(item)
                if recursive and entry.type_str == "tree":
                    out += entries(git[entry.id], f"{prefix}{entry.name}/")
            return out

        return {
            "sha": str(tree.id),
            "url": f"{call.api}/git/trees/{tree.id}",
            "tree": entries(tree, ""),
            "truncated": False,
        }

    def _ref_json(self, call: Call, name: str, oid: pygit2.Oid) -> dict:
        kind = call.repo["git"][oid].type_str
        return {
            "ref": name,
            "node_id": _node_id("REF", name),
            "url": f"{call.api}/git/{name}",
            "object": {"type": kind, "sha": str(oid), "url": f"{call.api}/git/{kind}s/{oid}"},
        }

    def _content_json(self, call: Call, ref: str, path: str, entry: pygit2.Object) -> dict:
        kind = {"tree": "dir", "commit": "submodule"}.get(entry.type_str, "file")
        if entry.filemode == 0o120000:
            kind = "symlink"
        full = call.repo["full_name"]
        git_url = f"{call.api}/git/{'trees' if kind == 'dir' else 'blobs'}/{entry.id}"
        html_url = f"https://github.com/{full}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{path}"
        url = f"{call.api}/contents/{path}?ref={ref}"
        return {
            "type": kind,
            "size": call.repo["git"][entry.id].size if kind in ("file", "symlink") else 0,
            "name": entry.name,
            "path": path,
            "sha": str(entry.id),
            "url": url,
            "git_url": git_url,
            "html_url": html_url,
            "download_url": f"https://raw.githubusercontent.com/{full}/{ref}/{path}"
            if kind == "file"
            else None,
            "_links": {"self": url, "git": git_url, "html": html_url},
        }

    def _check_run_json(self, call: Call, name: str, head_sha: str) -> dict:
        cid = next(self._ids)
        url = f"{call.api}/check-runs/{cid}"

        def minimal(branch: dict) -> dict:
            repo = branch["repo"]
            return {
                "ref": branch["ref"],
                "sha": branch["sha"],
                "repo": {k: repo[k] for k in ("id", "url", "name")},
            }

        # Like GitHub: open PRs of this repository (not forks) whose head is the commit.
        pulls = [
            {
                "id": pr["id"],
                "number": pr["number"],
                "url": pr["url"],
                "head": minimal(pr["head"]),
                "base": minimal(pr["base"]),
            }
            for (full, _), pr in self.pulls.items()
            if full == call.repo["full_name"] == pr["head"]["repo"]["full_name"]
            and pr["head"]["sha"] == head_sha
            and pr["state"] == "open"
        ]
        return {
            "id": cid,
            "node_id": _node_id("CR", cid),
            "head_sha": head_sha,
            "name": name,
            "external_id": "",
            "url": url,
            "html_url": f"https://github.com/{call.repo['full_name']}/runs/{cid}",
            "details_url": self._app_json()["html_url"],
            "status": "queued",
            "conclusion": None,
            "started_at": self._iso(),
            "completed_at": None,
            "output": {
                "title": None,
                "summary": None,
                "text": None,
                "annotations_count": 0,
                "annotations_url": f"{url}/annotations",
            },
            "check_suite": {"id": zlib.crc32(f"{call.repo['full_name']}@{head_sha}".encode())},
            "app": self._app_json(),
            "pull_requests": pulls,
        }

    def _apply_check_body(self, run: dict, body: dict) -> None:
        for key in (
            "name",
            "details_url",
            "external_id",
            "started_at",
            "status",
            "conclusion",
            "completed_at",
        ):
            if key in body:
                run[key] = body[key]
        if body.get("conclusion"):
            run["status"] = "completed"
        if run["status"] == "completed" and not run["completed_at"]:
            run["completed_at"] = self._iso()
        output = body.get("output") or {}
        run["output"].update({k: output[k] for k in ("title", "summary", "text") if k in output})
        self.annotations[run["id"]] += output.get("annotations", [])
        run["output"]["annotations_count"] = len(self.annotations[run["id"]])

    # -- lookups shared by handlers ------------------------------------------------------------------

    def _pull(self, call: Call) -> dict:
        pr = self.pulls.get((call.repo["full_name"], int(call.params["pull_number"])))
        if pr is None:
            raise not_found()
        return pr

    def _owned(self, items: dict[int, dict], call: Call, key: str) -> dict:
        """The item with id params[key], if it belongs to the repository of the path."""
        item = items.get(int(call.params[key]))
        if item is None or not item["url"].startswith(call.api + "/"):
            raise not_found()
        return item

    def _workflow(self, call: Call) -> dict:
        wanted = call.params["workflow_id"]
        for wid, workflow in self.workflows.items():
            if workflow["repo"] == call.repo["full_name"] and wanted in (str(wid), workflow["file"]):
                return workflow
        raise not_found()

    def _check_comment_body(self, body: str) -> None:
        if len(body) > MAX_COMMENT:
            raise HTTPError(
                422,
                "Validation Failed",
                violation=True,
                errors=[
                    {
                        "resource": "IssueComment",
                        "code": "unprocessable",
                        "field": "data",
                        "message": f"Body is too long (maximum is {MAX_COMMENT} characters)",
                    }
                ],
            )

    # -- operations (named after operationId) --------------------------------------------------------

    def op_apps_get_authenticated(self, call: Call):
        return 200, self._app_json()

    def op_apps_create_installation_access_token(self, call: Call):
        if call.params["installation_id"] != str(self.installation_id):
            raise not_found()
        token, expires = "ghs_" + secrets.token_hex(18), time.time() + self.token_ttl
        self._tokens[token] = expires
        self.tokens_issued += 1
        permissions = (call.body or {}).get("permissions") or dict(DEFAULT_PERMISSIONS)
        return 201, {
            "token": token,
            "expires_at": iso(expires),
            "permissions": permissions,
            "repository_selection": "selected",
        }

    async def _manifest_form(self, request: web.Request) -> web.Response:
        """github.com's "new App from a manifest" page, as the browser's form POST reaches it (the person
        confirming is taken as done): the manifest recorded, a one-time code made, and the browser sent to
        the manifest's `redirect_url` with the code and the `state` of the form's URL."""
        where = f"POST {request.path}"
        form = await request.post()
        try:
            manifest = json.loads(str(form["manifest"]))
        except (KeyError, ValueError):
            manifest = None
        problems = (
            ["the form has no JSON `manifest` field"]
            if not isinstance(manifest, dict)
            else [
                f"the manifest lacks `{key}`"
                for key in ("name", "url", "redirect_url")
                if key not in manifest
            ]
        )
        if request.content_type != "application/x-www-form-urlencoded":
            problems.append(f"a form POST is application/x-www-form-urlencoded, not {request.content_type}")
        if problems:
            self.violations += [f"{where}: {p}" for p in problems]
            return web.Response(status=422, text="; ".join(problems), content_type="text/html")
        assert isinstance(manifest, dict)
        code = secrets.token_hex(10)
        state = request.query.get("state")
        record = {"manifest": manifest, "org": request.match_info.get("org"), "state": state, "code": code}
        self.manifests.append(record)
        self.manifest_codes[code] = record
        back = {"code": code, **({"state": state} if state is not None else {})}
        url = manifest["redirect_url"]
        location = f"{url}{'&' if '?' in url else '?'}{urllib.parse.urlencode(back)}"
        return web.Response(status=302, headers={"Location": location})

    def op_apps_create_from_manifest(self, call: Call):
        made = self.manifest_codes.pop(call.params["code"], None)  # a code is good once
        if made is None:
            raise not_found()
        manifest, now, app_id = made["manifest"], self._iso(), next(self._ids)
        slug = re.sub(r"[^a-z0-9]+", "-", manifest["name"].lower()).strip("-")
        owner = self._user(made["org"], "Organization") if made["org"] else self._user(self.web_login)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        app = copy.deepcopy(self._example("integration-from-manifest"))
        app.update(
            id=app_id,
            slug=slug,
            node_id=_node_id("A", app_id),
            owner=owner,
            name=manifest["name"],
            description=manifest.get("description"),
            external_url=manifest["url"],
            html_url=f"{self.url}/apps/{slug}",
            created_at=now,
            updated_at=now,
            permissions=dict(manifest.get("default_permissions", {})),
            events=list(manifest.get("default_events", [])),
            client_id=f"Iv1.{secrets.token_hex(8)}",
            client_secret=secrets.token_hex(20),
            webhook_secret=secrets.token_hex(20),
            pem=key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            ).decode(),
        )
        self.apps_created.append(app)
        return 201, app

    def op_apps_get_repo_installation(self, call: Call):
        return 200, self._installation_json(call.repo["owner"])

    def _installation_json(self, owner: str) -> dict:
        installation = copy.deepcopy(self._example("installation"))
        installation.update(
            id=self.installation_id,
            app_id=int(self.app_id),
            app_slug=self._app_json()["slug"],
            account=self._user(owner),
            access_tokens_url=f"{self.url}/app/installations/{self.installation_id}/access_tokens",
        )
        return installation

    def op_apps_list_installations(self, call: Call):
        """The App's one installation, on every repository the fake holds."""
        owners = sorted({repo["owner"] for repo in self.repos.values()}) or ["nobody"]
        return 200, *self._paginate(call, [self._installation_json(owners[0])])

    def op_apps_list_repos_accessible_to_installation(self, call: Call):
        repos = [self._repo_json(name) for name in sorted(self.repos)]
        page, headers = self._paginate(call, repos)
        return 200, {"total_count": len(repos), "repositories": page}, headers

    def op_pulls_get(self, call: Call):
        pr = self._pull(call)
        try:
            files = self._diff_entries(call, pr["base"]["sha"], pr["head"]["sha"])
        except HTTPError:  # commits not in git: keep the template's counts
            return 200, pr
        pr.update(
            additions=sum(f["additions"] for f in files),
            deletions=sum(f["deletions"] for f in files),
            changed_files=len(files),
        )
        return 200, pr

    def op_pulls_list(self, call: Call):
        state, query = call.query.get("state", "open"), call.query
        found = [
            pr
            for (full, _), pr in sorted(self.pulls.items(), key=lambda item: -item[0][1])
            if full == call.repo["full_name"]
            and state in ("all", pr["state"])
            and query.get("head", pr["head"]["label"]) == pr["head"]["label"]
            and query.get("base", pr["base"]["ref"]) == pr["base"]["ref"]
        ]
        return 200, *self._paginate(call, found)

    def op_pulls_create(self, call: Call):
        """A pull request from a branch of this repository, opened by the App."""
        full, git, body = call.repo["full_name"], call.repo["git"], call.body
        head = git.references.get(f"refs/heads/{body['head']}")
        if head is None or f"refs/heads/{body['base']}" not in git.references:
            raise HTTPError(
                422, "Validation Failed", [{"resource": "PullRequest", "field": "head", "code": "invalid"}]
            )
        label = f"{call.repo['owner']}:{body['head']}"
        if any(
            p["state"] == "open" and p["head"]["label"] == label
            for (f, _), p in self.pulls.items()
            if f == full
        ):
            raise HTTPError(
                422,
                "Validation Failed",
                [
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"A pull request already exists for {label}.",
                    }
                ],
            )
        number = self._next_number(full)
        owner, name = full.split("/")
        pr = self.add_pull(
            owner,
            name,
            number,
            str(head.resolve().target),
            body["head"],
            base_ref=body["base"],
            user_login=self.bot_login,
            user_type="Bot",
            title=body.get("title"),
            body=body.get("body") or "",
        )
        self.opened_pulls.append(number)
        return 201, pr, {"Location": pr["url"]}

    def op_pulls_update(self, call: Call):
        pr = self._pull(call)
        for key in ("title", "body", "state"):
            if key in (call.body or {}):
                pr[key] = call.body[key]
        pr["updated_at"] = self._iso()
        return 200, pr

    def op_pulls_list_files(self, call: Call):
        pr = self._pull(call)
        page, headers = self._paginate(
            call, self._diff_entries(call, pr["base"]["sha"], pr["head"]["sha"])[:3000]
        )
        return 200, _within_diff_limit(page), headers

    def op_repos_compare_commits(self, call: Call):
        base_spec, sep, head_spec = call.params["basehead"].partition("...")
        git = call.repo["git"]
        base = _peel(_lookup(git, base_spec.split(":")[-1]), pygit2.Commit)
        head = _peel(_lookup(git, head_spec.split(":")[-1]), pygit2.Commit)
        if not sep or base is None or head is None:
            raise not_found()
        merge_base = git.merge_base(base.id, head.id)
        ahead, behind = git.ahead_behind(head.id, base.id)
        walker = git.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        if merge_base:
            walker.hide(merge_base)
        commits = [self._commit_json(call, c) for c in walker]
        page, headers = self._paginate(call, commits)
        html = f"https://github.com/{call.repo['full_name']}/compare/{call.params['basehead']}"
        return (
            200,
            {
                "url": f"{call.api}/compare/{call.params['basehead']}",
                "html_url": html,
                "permalink_url": f"https://github.com/{call.repo['full_name']}/compare/{base.id}...{head.id}",
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "base_commit": self._commit_json(call, base),
                "merge_base_commit": self._commit_json(call, git[merge_base]) if merge_base else None,
                "status": (
                    "identical"
                    if head.id == base.id
                    else "ahead"
                    if not behind
                    else "behind"
                    if not ahead
                    else "diverged"
                ),
                "ahead_by": ahead,
                "behind_by": behind,
                "total_commits": len(commits),
                "commits": page,
                "files": _within_diff_limit(self._diff_entries(call, str(base.id), str(head.id))[:300]),
            },
            headers,
        )

    def op_repos_get_content(self, call: Call):
        git, ref = call.repo["git"], call.query.get("ref") or call.repo["default_branch"]
        target = _peel(_lookup(git, ref), pygit2.Commit)
        if target is None:
            raise HTTPError(404, f"No commit found for the ref {ref}")
        path = call.params["path"].strip("/")
        try:
            entry = target.tree[path]
        except KeyError:
            raise not_found() from None
        if entry.type_str == "tree":
            return 200, [self._content_json(call, ref, f"{path}/{e.name}", e) for e in git[entry.id]]
        if "raw" in call.headers.get("Accept", ""):
            return 200, git[entry.id].data, {"Content-Type": "application/vnd.github.raw"}
        item = self._content_json(call, ref, path, entry)
        if entry.type_str == "blob":
            item.update(content=_b64(git[entry.id].data), encoding="base64")
        return 200, item

    def op_git_get_tree(self, call: Call):
        tree = _peel(_lookup(call.repo["git"], call.params["tree_sha"]), pygit2.Tree)
        if tree is None:
            raise not_found()
        # GitHub recurses for any value of "recursive", even "0" or "false".
        return 200, self._tree_json(call, tree, "recursive" in call.query)

    def op_git_get_blob(self, call: Call):
        blob = _object(call.repo["git"], call.params["file_sha"])
        if not isinstance(blob, pygit2.Blob):
            raise not_found()
        if call.headers.get("Accept", "") == "application/vnd.github.raw+json":
            return 200, blob.data, {"Content-Type": "application/vnd.github.raw+json"}
        return 200, {
            "sha": str(blob.id),
            "node_id": _node_id("B", blob.id),
            "size": blob.size,
            "url": f"{call.api}/git/blobs/{blob.id}",
            "content": _b64(blob.data),
            "encoding": "base64",
        }

    def op_git_create_blob(self, call: Call):
        content, encoding = call.body["content"], call.body.get("encoding", "utf-8")
        if encoding == "base64":
            try:
                data = base64.b64decode(content)
            except binascii.Error:
                raise HTTPError(422, "content is not valid Base64") from None
        elif encoding in ("utf-8", "utf8"):
            data = content.encode()
        else:
            raise HTTPError(422, f"encoding must be utf-8 or base64, not {encoding}")
        oid = call.repo["git"].create_blob(data)
        url = f"{call.api}/git/blobs/{oid}"
        return 201, {"url": url, "sha": str(oid)}, {"Location": url}

    def op_git_create_tree(self, call: Call):
        git, flat = call.repo["git"], {}
        if "base_tree" in call.body:
            base = _object(git, call.body["base_tree"])
            if not isinstance(base, pygit2.Tree):
                raise HTTPError(422, f"base_tree {call.body['base_tree']} is not a valid tree")
            flat = _flatten(git, base)
        for item in call.body["tree"]:
            path, kind = item.get("path", "").strip("/"), item.get("type", "blob")
            if not path or ("sha" in item and "content" in item):
                raise HTTPError(422, "Each tree entry needs a path and exactly one of sha or content")
            _drop(flat, path)
            mode = int(item.get("mode", "040000" if kind == "tree" else "100644"), 8)
            if "content" in item:
                flat[path] = (git.create_blob(item["content"].encode()), mode)
            elif item.get("sha") is None:
                continue  # sha: null deletes the path
            elif kind == "commit" and re.fullmatch(
                r"[0-9a-f]{40}", item["sha"]
            ):  # a submodule: lives elsewhere
                flat[path] = (pygit2.Oid(hex=item["sha"]), 0o160000)
            else:
                obj = _object(git, item["sha"])
                if obj is None or obj.type_str != kind:
                    raise HTTPError(422, f"tree.sha {item['sha']} is not a valid {kind}")
                if kind == "tree":
                    flat.update({f"{path}/{p}": leaf for p, leaf in _flatten(git, obj).items()})
                else:
                    flat[path] = (obj.id, mode)
        tree = self._tree_json(call, git[_build_tree(git, flat)], recursive=False)
        return 201, tree, {"Location": tree["url"]}

    def op_git_create_commit(self, call: Call):
        git, body = call.repo["git"], call.body
        tree = _object(git, body["tree"])
        if not isinstance(tree, pygit2.Tree):
            raise HTTPError(422, "Tree SHA does not exist")
        parents = [_peel(_object(git, sha), pygit2.Commit) for sha in body.get("parents", [])]
        if None in parents:
            raise HTTPError(422, "Parent SHA does not exist or is not a commit object")
        bot = pygit2.Signature(
            self.bot_login,
            f"{self._user(self.bot_login)['id']}+{self.bot_login}@users.noreply.github.com",
            int(time.time()),
            0,
        )

        def signature(person: dict | None, default: pygit2.Signature) -> pygit2.Signature:
            if person is None:
                return default
            when = dt.datetime.fromisoformat(person["date"]) if "date" in person else None
            delta = when.utcoffset() if when else None
            offset = int(delta.total_seconds() // 60) if delta else 0
            return pygit2.Signature(
                person["name"], person["email"], int(when.timestamp()) if when else int(time.time()), offset
            )

        author = signature(body.get("author"), bot)
        committer = signature(body.get("committer"), author)
        oid = git.create_commit(None, author, committer, body["message"], tree.id, [p.id for p in parents])
        data = self._git_commit_json(call, git[oid])
        return 201, data, {"Location": data["url"]}

    def op_repos_get_branch(self, call: Call):
        git, full, name = call.repo["git"], call.repo["full_name"], call.params["branch"]
        ref = git.references.get(f"refs/heads/{name}")
        if ref is None:
            raise not_found()
        protected = (full, name) in self.protected
        branch = copy.deepcopy(self._example("branch-get"))
        branch.update(
            name=name,
            commit=self._commit_json(call, git[ref.resolve().target].peel(pygit2.Commit)),
            _links={"self": f"{call.api}/branches/{name}", "html": f"https://github.com/{full}/tree/{name}"},
            protected=protected,
            protection_url=f"{call.api}/branches/{name}/protection",
        )
        branch["protection"]["enabled"] = protected
        return 200, branch

    def op_git_get_commit(self, call: Call):
        found = _peel(_object(call.repo["git"], call.params["commit_sha"]), pygit2.Commit)
        if found is None:
            raise not_found()
        return 200, self._git_commit_json(call, found)

    def op_git_get_ref(self, call: Call):
        ref = call.repo["git"].references.get("refs/" + call.params["ref"])
        if ref is None:
            raise not_found()
        return 200, self._ref_json(call, ref.name, ref.resolve().target)

    def op_git_list_matching_refs(self, call: Call):
        git, prefix = call.repo["git"], "refs/" + call.params["ref"]
        names = sorted(name for name in git.references if name.startswith(prefix))
        return 200, [self._ref_json(call, name, git.references[name].resolve().target) for name in names]

    def op_git_create_ref(self, call: Call):
        git, name = call.repo["git"], call.body["ref"]
        if not name.startswith("refs/") or name.count("/") < 2:
            raise HTTPError(422, f"{name} is not a valid ref name.")
        if name in git.references:
            raise HTTPError(422, "Reference already exists")
        target = _object(git, call.body["sha"])
        if target is None:
            raise HTTPError(422, "Object does not exist")
        git.references.create(name, target.id)
        self._ref_moved(call.repo["full_name"], name, str(target.id))
        data = self._ref_json(call, name, target.id)
        return 201, data, {"Location": data["url"]}

    def op_git_update_ref(self, call: Call):
        git, name = call.repo["git"], "refs/" + call.params["ref"]
        ref = git.references.get(name)
        if ref is None:
            raise HTTPError(422, "Reference does not exist")
        target = _object(git, call.body["sha"])
        if target is None:
            raise HTTPError(422, "Object does not exist")
        if (call.repo["full_name"], name.removeprefix("refs/heads/")) in self.protected:
            raise HTTPError(422, f"Protected branch update failed for {name}.")
        old = ref.resolve().target
        if (
            not call.body.get("force")
            and target.id != old
            and not (isinstance(target, pygit2.Commit) and git.descendant_of(target.id, old))
        ):
            raise HTTPError(422, "Update is not a fast forward")
        ref.set_target(target.id)
        self._ref_moved(call.repo["full_name"], name, str(target.id))
        return 200, self._ref_json(call, name, target.id)

    def op_git_delete_ref(self, call: Call):
        git, name = call.repo["git"], "refs/" + call.params["ref"]
        if name not in git.references:
            raise HTTPError(422, "Reference does not exist")
        git.references.delete(name)
        self._pushed(call.repo["full_name"])
        return 204, None

    def op_issues_list_for_repo(self, call: Call):
        """The repository's plain issues, newest first, filtered by state, labels (all of them) and creator."""
        full, query = call.repo["full_name"], call.query
        state = query.get("state", "open")
        wanted = {label for label in str(query.get("labels", "")).split(",") if label}
        found = [
            issue
            for (f, _), issue in sorted(self.issues.items(), key=lambda item: -item[0][1])
            if f == full
            and state in ("all", issue["state"])
            and wanted <= {label["name"] for label in issue["labels"]}
            and query.get("creator", issue["user"]["login"]) == issue["user"]["login"]
        ]
        return 200, *self._paginate(call, found)

    def op_issues_create(self, call: Call):
        """An issue opened by the App; labels that do not exist yet are made, as GitHub does for writers."""
        owner, name = call.repo["full_name"].split("/")
        body = call.body
        self._check_comment_body(body.get("body") or "")
        labels = tuple(
            item if isinstance(item, str) else item.get("name", "") for item in body.get("labels") or []
        )
        issue = self.add_issue(
            owner, name, str(body["title"]), body.get("body") or "", self.bot_login, "Bot", labels
        )
        return 201, issue, {"Location": issue["url"]}

    def _issue(self, call: Call) -> dict:
        """Issue `issue_number` as the issues API shows it (a pull request too, with its `pull_request` key)."""
        key = (call.repo["full_name"], int(call.params["issue_number"]))
        if key in self.issues:
            return self.issues[key]
        if key in self.pulls:
            pr = self.pulls[key]
            issue = copy.deepcopy(self._example("issue"))
            issue.update(
                number=pr["number"],
                title=pr["title"],
                body=pr["body"],
                state=pr["state"],
                user=pr["user"],
                html_url=pr["html_url"],
                pull_request={
                    "url": pr["url"],
                    "html_url": pr["html_url"],
                    "diff_url": None,
                    "patch_url": None,
                },
            )
            return issue
        raise not_found()

    def op_issues_get(self, call: Call):
        return 200, self._issue(call)

    def op_issues_update(self, call: Call):
        issue = self._issue(call)
        if "pull_request" in issue:
            raise HTTPError(422, "Validation Failed: edit a pull request with the pulls API in this fake")
        body = call.body or {}
        if "body" in body:
            self._check_comment_body(body["body"] or "")
        for key in ("title", "body", "state"):
            if key in body:
                issue[key] = body[key]
        if "labels" in body:
            issue["labels"] = [self._label(call.repo["full_name"], str(label)) for label in body["labels"]]
        issue["closed_at"] = self._iso() if issue["state"] == "closed" else None
        issue["updated_at"] = self._iso()
        return 200, issue

    def op_issues_list_comments(self, call: Call):
        issue_url = f"{call.api}/issues/{call.params['issue_number']}"
        comments = [
            c
            for c in sorted(self.comments.values(), key=lambda c: c["id"])
            if c["issue_url"] == issue_url
            and ("since" not in call.query or _epoch(c["updated_at"]) >= _epoch(call.query["since"]))
        ]
        return 200, *self._paginate(call, comments)

    def op_issues_create_comment(self, call: Call):
        self._check_comment_body(call.body["body"])
        owner, name = call.repo["full_name"].split("/")
        comment = self.add_comment(
            owner, name, int(call.params["issue_number"]), call.body["body"], self.bot_login, "Bot"
        )
        return 201, comment, {"Location": comment["url"]}

    def op_issues_get_comment(self, call: Call):
        return 200, self._owned(self.comments, call, "comment_id")

    def op_issues_update_comment(self, call: Call):
        comment = self._owned(self.comments, call, "comment_id")
        self._check_comment_body(call.body["body"])
        comment.update(body=call.body["body"], updated_at=self._iso())
        return 200, comment

    def op_issues_delete_comment(self, call: Call):
        comment = self._owned(self.comments, call, "comment_id")
        del self.comments[comment["id"]]
        self.reactions.pop(comment["id"], None)
        return 204, None

    def op_reactions_create_for_issue_comment(self, call: Call):
        comment = self._owned(self.comments, call, "comment_id")
        reactions = self.reactions.setdefault(comment["id"], [])
        for reaction in reactions:
            if reaction["content"] == call.body["content"] and reaction["user"]["login"] == self.bot_login:
                return 200, reaction
        rid = next(self._ids)
        reaction = {
            "id": rid,
            "node_id": _node_id("RE", rid),
            "user": self._user(self.bot_login, "Bot"),
            "content": call.body["content"],
            "created_at": self._iso(),
        }
        reactions.append(reaction)
        return 201, reaction

    def op_checks_create(self, call: Call):
        if _peel(_object(call.repo["git"], call.body["head_sha"]), pygit2.Commit) is None:
            raise HTTPError(422, f"No commit found for SHA: {call.body['head_sha']}")
        run = self._check_run_json(call, call.body["name"], call.body["head_sha"])
        self.check_runs[run["id"]], self.annotations[run["id"]] = run, []
        self._apply_check_body(run, call.body)
        self.check_run_requests.append({"method": "POST", "id": run["id"], "body": call.body})
        return 201, run

    def op_checks_get(self, call: Call):
        return 200, self._owned(self.check_runs, call, "check_run_id")

    def op_checks_update(self, call: Call):
        run = self._owned(self.check_runs, call, "check_run_id")
        self._apply_check_body(run, call.body)
        self.check_run_requests.append({"method": "PATCH", "id": run["id"], "body": call.body})
        return 200, run

    def op_checks_list_for_ref(self, call: Call):
        target = _peel(_lookup(call.repo["git"], call.params["ref"]), pygit2.Commit)
        if target is None:
            raise HTTPError(422, f"No commit found for SHA: {call.params['ref']}")
        q = call.query
        runs = [
            r
            for r in sorted(self.check_runs.values(), key=lambda r: -r["id"])
            if r["url"].startswith(call.api + "/")
            and r["head_sha"] == str(target.id)
            and q.get("check_name", r["name"]) == r["name"]
            and q.get("status", r["status"]) == r["status"]
            and q.get("app_id", str(self.app_id)) == str(self.app_id)
        ]
        if q.get("filter", "latest") == "latest":
            runs = [r for i, r in enumerate(runs) if r["name"] not in {o["name"] for o in runs[:i]}]
        page, headers = self._paginate(call, runs)
        return 200, {"total_count": len(runs), "check_runs": page}, headers

    def op_repos_get_collaborator_permission_level(self, call: Call):
        login = call.params["username"]
        role = self.permissions.get((call.repo["full_name"], login), "read")
        permission = {"maintain": "write", "triage": "read"}.get(role, role)
        return 200, {
            "permission": permission,
            "role_name": role,
            "user": {**self._user(login), "role_name": role},
        }

    def op_actions_create_workflow_dispatch(self, call: Call):
        workflow, git, ref = self._workflow(call), call.repo["git"], call.body["ref"]
        if not workflow["dispatchable"]:
            raise HTTPError(422, "Workflow does not have 'workflow_dispatch' trigger")
        refs = [name for name in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}") if name in git.references]
        target = _peel(git.references[refs[0]].peel(), pygit2.Commit) if refs else None
        if target is None:
            raise HTTPError(422, f"No ref found for: {ref}")
        run = self._new_run(
            call, workflow, ref.removeprefix("refs/heads/"), target, call.body.get("inputs") or {}
        )
        self.dispatches.append(
            {
                "repo": call.repo["full_name"],
                "workflow_id": call.params["workflow_id"],
                "run_id": run["id"],
                **call.body,
            }
        )
        if call.body.get("return_run_details") and self.return_run_details:
            return 200, {"workflow_run_id": run["id"], "run_url": run["url"], "html_url": run["html_url"]}
        return 204, None

    def _new_run(self, call: Call, workflow: dict, branch: str, target: pygit2.Commit, inputs: dict) -> dict:
        rid, now, info, full = next(self._ids), self._iso(), workflow["workflow"], call.repo["full_name"]
        template = _load("payloads/workflow_run.completed.json")["workflow_run"]
        text = json.dumps(template)
        for old, value in [
            ("https://api.github.com", self.url),
            ("octo-org/octo-repo", full),
            (str(template["id"]), str(rid)),
            (str(template["workflow_id"]), str(info["id"])),
        ]:
            text = text.replace(old, value)
        run, sha, bot = json.loads(text), str(target.id), self._user(self.bot_login, "Bot")
        run.update(
            node_id=_node_id("WR", rid),
            name=info["name"],
            head_branch=branch,
            head_sha=sha,
            path=info["path"],
            display_title=f"{info['name']} {inputs['request_id']}"
            if "request_id" in inputs
            else info["name"],
            event="workflow_dispatch",
            status="queued",
            conclusion=None,
            run_attempt=1,
            created_at=now,
            updated_at=now,
            run_started_at=now,
            previous_attempt_url=None,
            pull_requests=[],
            actor=bot,
            triggering_actor=bot,
            repository=self._repo_json(full),
            head_repository=self._repo_json(full),
            run_number=1 + sum(r["workflow_id"] == info["id"] for r in self.workflow_runs.values()),
            head_commit={
                "id": sha,
                "tree_id": str(target.tree_id),
                "message": target.message,
                "timestamp": iso(target.commit_time),
                "author": {"name": target.author.name, "email": target.author.email},
                "committer": {"name": target.committer.name, "email": target.committer.email},
            },
        )
        self.workflow_runs[rid] = run
        return run

    def op_actions_get_workflow_run(self, call: Call):
        return 200, self._owned(self.workflow_runs, call, "run_id")

    def op_actions_list_workflow_runs(self, call: Call):
        workflow, q = self._workflow(call), call.query
        runs = [
            r
            for r in sorted(self.workflow_runs.values(), key=lambda r: -r["id"])
            if r["workflow_id"] == workflow["workflow"]["id"]
            and q.get("branch", r["head_branch"]) == r["head_branch"]
            and q.get("event", r["event"]) == r["event"]
            and q.get("head_sha", r["head_sha"]) == r["head_sha"]
            and q.get("actor", r["actor"]["login"]) == r["actor"]["login"]
            and ("status" not in q or q["status"] in (r["status"], r["conclusion"]))
            and ("created" not in q or _in_range(r["created_at"], q["created"]))
        ]
        page, headers = self._paginate(call, runs)
        return 200, {"total_count": len(runs), "workflow_runs": page}, headers

    def op_actions_list_workflow_run_artifacts(self, call: Call):
        run = self._owned(self.workflow_runs, call, "run_id")
        found = [
            {k: v for k, v in a.items() if k != "run_id"}
            for a in self.artifacts.values()
            if a["run_id"] == run["id"] and call.query.get("name", a["name"]) == a["name"]
        ]
        page, headers = self._paginate(call, found)
        return 200, {"total_count": len(found), "artifacts": page}, headers

    def op_actions_download_artifact(self, call: Call):
        artifact = self._owned(self.artifacts, call, "artifact_id")
        if call.params["archive_format"] != "zip":
            raise not_found()
        if artifact["expired"]:
            raise HTTPError(410, "Artifact has expired")
        # GitHub's answer points elsewhere (a storage host): another origin than the API's
        blob = self.url.replace("127.0.0.1", "localhost") + f"/_blobs/artifacts/{artifact['id']}"
        return 302, None, {"Location": blob}

    def op_actions_cancel_workflow_run(self, call: Call):
        run = self._owned(self.workflow_runs, call, "run_id")
        if run["status"] == "completed":
            raise HTTPError(409, "Cannot cancel a workflow run that is completed.")
        run.update(status="completed", conclusion="cancelled", updated_at=self._iso())
        return 202, {}

    def op_rate_limit_get(self, call: Call):
        overview = copy.deepcopy(self._example("rate-limit-overview"))
        core = {
            "limit": self.rate_limit,
            "used": self.rate_used,
            "remaining": max(0, self.rate_limit - self.rate_used),
            "reset": self.rate_reset,
        }
        overview["resources"]["core"] = overview["rate"] = core
        return 200, overview


@pytest_asyncio.fixture
async def fake_github():
    """A started FakeGitHub; the test fails if anything broke GitHub's documented contract."""
    async with FakeGitHub() as fake:
        yield fake
        assert fake.violations == [], "GitHub contract violations:\n" + "\n".join(fake.violations)


async def installation_gh(fake: FakeGitHub, session: aiohttp.ClientSession) -> GitHubAPI:
    """A gidgethub client holding a fresh installation token, as the bot builds one."""
    app = GitHubAPI(session, "test", base_url=fake.url)
    token = await get_installation_access_token(
        app,
        installation_id=str(fake.installation_id),
        app_id=str(fake.app_id),
        private_key=fake.private_key_pem,
    )
    return GitHubAPI(session, "test", oauth_token=token["token"], base_url=fake.url)
