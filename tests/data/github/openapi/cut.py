#!/usr/bin/env python3
"""Cut a small, self-contained OpenAPI document out of GitHub's full REST API
description (github/rest-api-description, descriptions/api.github.com/
api.github.com.json, or the same file as shipped in the npm package
@octokit/openapi under generated/api.github.com.json).

Standard library only.  Usage:

    python3 cut.py FULL.json [-o github-subset.json]
                   [--webhooks-out webhooks-subset.json]
                   [--replace-op METHOD PATH FILE ...] [--no-examples]

What it does:
  * keeps only the operations listed in OPERATIONS (plus EXTRA_OPERATIONS);
  * copies every component reachable through "$ref" from those operations
    (schemas, parameters, responses, headers, examples), transitively, so the
    result is self-contained; "$ref"s stay local ("#/components/...");
  * if the input is the @octokit/openapi build, undoes what that build adds
    (the "x-octokit" keys, the renamed compare operationId) -- see
    ../SOURCE.md; its replacement of POST /repos/{owner}/{repo}/check-runs is
    undone with --replace-op and official-ops/checks-create.json;
  * with --webhooks-out, writes a second document holding the "x-webhooks"
    entries (webhook payload schemas) for the events in WEBHOOKS;
  * checks that no "$ref" in the output dangles, and exits non-zero if any does.
"""

import argparse
import copy
import json
import sys

# (method, path) pairs, exactly as they appear in the official description.
OPERATIONS = [
    ("get", "/app"),
    ("post", "/app/installations/{installation_id}/access_tokens"),
    ("get", "/repos/{owner}/{repo}/installation"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("get", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("get", "/repos/{owner}/{repo}/contents/{path}"),
    ("get", "/repos/{owner}/{repo}/git/trees/{tree_sha}"),
    ("get", "/repos/{owner}/{repo}/git/blobs/{file_sha}"),
    ("post", "/repos/{owner}/{repo}/git/blobs"),
    ("post", "/repos/{owner}/{repo}/git/trees"),
    ("post", "/repos/{owner}/{repo}/git/commits"),
    # The description has no GET on git/refs/{ref}; a single ref is read with
    # GET git/ref/{ref} (git/get-ref).  PATCH/DELETE live on git/refs/{ref}.
    ("get", "/repos/{owner}/{repo}/git/ref/{ref}"),
    ("patch", "/repos/{owner}/{repo}/git/refs/{ref}"),
    ("delete", "/repos/{owner}/{repo}/git/refs/{ref}"),
    ("post", "/repos/{owner}/{repo}/git/refs"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}"),
    ("get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"),
    ("post", "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/rate_limit"),
]

# Siblings that a bot writing a commit / following a check run also needs.
EXTRA_OPERATIONS = [
    ("get", "/repos/{owner}/{repo}/git/commits/{commit_sha}"),  # tree sha of a commit
    ("get", "/repos/{owner}/{repo}/git/matching-refs/{ref}"),  # list refs by prefix
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    # never push to the default or a protected branch; propose a bump as a pull request
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/branches/{branch}"),
    ("get", "/repos/{owner}/{repo}/pulls"),
    ("post", "/repos/{owner}/{repo}/pulls"),
    ("patch", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    # scheduled work across installations; the pin dashboard issue; deleting the bot's own merged bump branches
    ("get", "/app/installations"),
    ("get", "/installation/repositories"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("post", "/repos/{owner}/{repo}/issues"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("delete", "/repos/{owner}/{repo}/git/refs/{ref}"),
    # registering the App from its manifest
    ("post", "/app-manifests/{code}/conversions"),
    # a platform run's report: its artifacts listed, the report's archive downloaded
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"),
]

# Keys of "x-webhooks" in the description (event-action, dashes).
WEBHOOKS = [
    "pull-request-opened",
    "pull-request-synchronize",
    "pull-request-reopened",
    "pull-request-closed",
    "pull-request-edited",
    "pull-request-ready-for-review",
    "issue-comment-created",
    "issue-comment-edited",
    "issue-comment-deleted",
    "check-run-created",
    "check-run-completed",
    "check-run-rerequested",
    "check-run-requested-action",
    "check-suite-requested",
    "check-suite-rerequested",
    "check-suite-completed",
    "workflow-run-requested",
    "workflow-run-in-progress",
    "workflow-run-completed",
    "workflow-job-queued",
    "workflow-job-in-progress",
    "workflow-job-completed",
    "workflow-job-waiting",
    "installation-created",
    "installation-deleted",
    "installation-repositories-added",
    "installation-repositories-removed",
    "ping",
    "push",
    "issues-opened",
    "issues-edited",
    "issues-closed",
]

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def iter_refs(node):
    """Yield every local "$ref" string found anywhere under node."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                yield ref
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)


def pointer_parts(ref):
    return [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]


def resolve(doc, ref):
    cur = doc
    for part in pointer_parts(ref):
        if isinstance(cur, list):
            cur = cur[int(part)]
        else:
            cur = cur[part]
    return cur


def strip_key(node, key):
    if isinstance(node, dict):
        node.pop(key, None)
        for v in node.values():
            strip_key(v, key)
    elif isinstance(node, list):
        for v in node:
            strip_key(v, key)


def drop_examples(node):
    """Remove media-type/parameter "examples"/"example" maps (not schema keywords
    named "examples" inside properties, which are rare; we only drop the OpenAPI
    Example Object maps, i.e. those whose values are {"$ref"| "value"})."""
    if isinstance(node, dict):
        ex = node.get("examples")
        if isinstance(ex, dict) and all(
            isinstance(v, dict) and ("$ref" in v or "value" in v) for v in ex.values()
        ):
            del node["examples"]
        for v in node.values():
            drop_examples(v)
    elif isinstance(node, list):
        for v in node:
            drop_examples(v)


def strip_unmapped_discriminators(node, where="", found=None):
    """Remove "discriminator" objects that have no "mapping" while their
    oneOf/anyOf alternatives are inline schemas.  OpenAPI 3.0 resolves such a
    discriminator by looking the property value up as a component name
    ("#/components/schemas/completed"), which does not exist, so validators
    such as openapi-core reject every body.  The discriminator is only a hint:
    the oneOf/anyOf itself still carries the rule.  Returns the places changed."""
    if found is None:
        found = []
    if isinstance(node, dict):
        disc = node.get("discriminator")
        alts = node.get("oneOf") or node.get("anyOf") or []
        if (
            isinstance(disc, dict)
            and "mapping" not in disc
            and alts
            and any("$ref" not in a for a in alts if isinstance(a, dict))
        ):
            del node["discriminator"]
            found.append(where)
        for k, v in node.items():
            key = k.replace("~", "~0").replace("/", "~1")
            strip_unmapped_discriminators(v, where + "/" + key, found)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            strip_unmapped_discriminators(v, f"{where}/{i}", found)
    return found


def close_components(full, roots):
    """Return {section: {name: component}} for all components reachable from roots."""
    needed = {}
    queue = []
    for root in roots:
        queue.extend(iter_refs(root))
    seen = set()
    while queue:
        ref = queue.pop()
        if ref in seen:
            continue
        seen.add(ref)
        parts = pointer_parts(ref)
        if len(parts) < 3 or parts[0] != "components":
            raise SystemExit(f"unsupported $ref (not under #/components): {ref}")
        section, name = parts[1], parts[2]
        comp = full["components"][section][name]
        if name not in needed.setdefault(section, {}):
            needed[section][name] = comp
            queue.extend(iter_refs(comp))
    # stable order
    return {s: dict(sorted(needed[s].items())) for s in sorted(needed)}


def dangling_refs(doc):
    bad = []
    for ref in iter_refs(doc):
        try:
            resolve(doc, ref)
        except (KeyError, IndexError, ValueError, TypeError):
            bad.append(ref)
    return sorted(set(bad))


def is_octokit_build(full):
    return "Octokit" in full.get("info", {}).get("title", "") or any(
        "x-octokit" in op
        for item in full.get("paths", {}).values()
        for m, op in item.items()
        if m in HTTP_METHODS and isinstance(op, dict)
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("full", help="path to the full description (JSON)")
    ap.add_argument("-o", "--out", default="github-subset.json")
    ap.add_argument("--webhooks-out", help="also write the x-webhooks subset here")
    ap.add_argument(
        "--replace-op",
        nargs=3,
        action="append",
        default=[],
        metavar=("METHOD", "PATH", "FILE"),
        help="replace an operation with the JSON object in FILE",
    )
    ap.add_argument("--no-extras", action="store_true", help="leave out EXTRA_OPERATIONS")
    ap.add_argument(
        "--no-examples", action="store_true", help="drop OpenAPI example objects (smaller output)"
    )
    ap.add_argument(
        "--keep-discriminators",
        action="store_true",
        help="keep discriminators without mapping over inline schemas",
    )
    ap.add_argument("--source-note", default="", help="text appended to info.description")
    args = ap.parse_args(argv)

    with open(args.full, encoding="utf-8") as fh:
        full = json.load(fh)

    octokit = is_octokit_build(full)
    replaced = {}
    for method, path, fname in args.replace_op:
        with open(fname, encoding="utf-8") as fh:
            replaced[(method.lower(), path)] = json.load(fh)

    ops = list(OPERATIONS) + ([] if args.no_extras else list(EXTRA_OPERATIONS))
    paths = {}
    used_tags = set()
    for method, path in ops:
        item = full["paths"].get(path)
        if item is None or method not in item:
            raise SystemExit(f"operation not in the description: {method.upper()} {path}")
        op = copy.deepcopy(replaced.get((method, path), item[method]))
        out_item = paths.setdefault(path, {})
        if "parameters" in item and "parameters" not in out_item:
            out_item["parameters"] = copy.deepcopy(item["parameters"])
        out_item[method] = op
        used_tags.update(op.get("tags", []))
    # keep method order as in the source path item
    for path, out_item in paths.items():
        order = list(full["paths"][path].keys())
        paths[path] = {k: out_item[k] for k in order if k in out_item}

    if octokit:
        strip_key(paths, "x-octokit")
        cmp_op = paths.get("/repos/{owner}/{repo}/compare/{basehead}", {}).get("get")
        if cmp_op and cmp_op.get("operationId") == "repos/compare-commits-with-basehead":
            cmp_op["operationId"] = "repos/compare-commits"  # official id
    if args.no_examples:
        drop_examples(paths)
    stripped = [] if args.keep_discriminators else strip_unmapped_discriminators(paths, "#/paths")

    info = copy.deepcopy(full.get("info", {}))
    if octokit:
        # the octokit build rewrote title/description/contact.url; keep only
        # what is GitHub's, plus the build's version for traceability
        info.pop("contact", None)
        info["version"] = "octokit-build-" + str(info.get("version", "unknown"))
    info["title"] = "GitHub REST API - subset for a GitHub App bot"
    n_ops = sum(1 for p in paths.values() for m in p if m in HTTP_METHODS)
    desc = (
        "Operations a pull-request bot uses, cut by cut.py from GitHub's REST API "
        f"OpenAPI description (github/rest-api-description). {n_ops} operations."
    )
    if octokit:
        desc += (
            " Input was the @octokit/openapi build of that description; its"
            " 'x-octokit' additions were removed."
        )
    for method, path in sorted(replaced):
        desc += f" {method.upper()} {path} was replaced from a file given with --replace-op."
    if stripped:
        places = ", ".join(stripped)
        desc += (
            " A 'discriminator' without 'mapping' over inline oneOf schemas was"
            f" removed at: {places} (validators cannot resolve it; the oneOf is kept)."
        )
    if args.source_note:
        desc += " " + args.source_note
    info["description"] = desc

    def build(paths_part, extra_top):
        doc = {"openapi": full["openapi"], "info": info}
        if "servers" in full:
            doc["servers"] = full["servers"]
        if "externalDocs" in full:
            doc["externalDocs"] = full["externalDocs"]
        roots = [paths_part] + list(extra_top.values())
        tags = set()
        for r in roots:
            for item in r.values() if isinstance(r, dict) else []:
                for op in item.values():
                    if isinstance(op, dict):
                        tags.update(op.get("tags", []))
        if full.get("tags"):
            doc["tags"] = [t for t in full["tags"] if t.get("name") in tags]
        doc["paths"] = paths_part
        doc.update(extra_top)
        comps = close_components(full, roots)
        if args.no_examples:
            comps.pop("examples", None)
            drop_examples(comps)
            comps = close_components({"components": comps}, [paths_part] + list(extra_top.values()))
        if octokit:
            strip_key(comps, "x-octokit")
        if not args.keep_discriminators:
            stripped.extend(strip_unmapped_discriminators(comps, "#/components"))
        doc["components"] = comps
        return doc

    subset = build(paths, {})
    bad = dangling_refs(subset)
    if bad:
        raise SystemExit(f"dangling $ref in subset: {bad}")
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(subset, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    n_comp = sum(len(v) for v in subset["components"].values())
    sections = ", ".join(f"{k}={len(v)}" for k, v in subset["components"].items())
    print(f"wrote {args.out}: {len(paths)} paths, {n_comp} components ({sections})")

    if args.webhooks_out:
        src = full.get("x-webhooks") or full.get("webhooks") or {}
        hooks = {}
        for key in WEBHOOKS:
            if key not in src:
                print(f"warning: webhook {key} not in description", file=sys.stderr)
                continue
            hooks[key] = copy.deepcopy(src[key])
        if octokit:
            strip_key(hooks, "x-octokit")
        wdoc = build({}, {"x-webhooks": hooks})
        wdoc["info"] = dict(
            info,
            title="GitHub webhooks - payload schemas subset",
            description="x-webhooks entries (request body = payload "
            f"schema, header parameters = delivery headers) for {len(hooks)} "
            "event/action pairs, cut by cut.py from the same source.",
        )
        bad = dangling_refs(wdoc)
        if bad:
            raise SystemExit(f"dangling $ref in webhooks subset: {bad}")
        with open(args.webhooks_out, "w", encoding="utf-8") as fh:
            json.dump(wdoc, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        n_comp = sum(len(v) for v in wdoc["components"].values())
        print(f"wrote {args.webhooks_out}: {len(hooks)} webhooks, {n_comp} components")
    return 0


if __name__ == "__main__":
    sys.exit(main())
