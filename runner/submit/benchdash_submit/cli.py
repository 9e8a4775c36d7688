"""benchdash-submit: upload a bundle, wait for its verdict, print it, exit by it.

Exit status: 0 the verdict does not meet ``--fail-on``; 1 it does; 2 a usage error, a server that refused or
failed, a bundle that could not be imported, or no verdict within ``--wait`` seconds (the message on stderr).
Standard library only, Python 3.9 or newer: it runs on any CI machine without installing anything else.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

from . import __version__

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "markdown", "json")
FAIL_ON = ("regression", "flag", "never")
# How often the bundle and its verdict are asked for while waiting, and how long one request may take.
POLL_SECONDS = 2.0
REQUEST_TIMEOUT = 300.0
CHUNK = 1024 * 1024


class SubmitError(Exception):
    """Anything that ends the command with exit status 2: said on stderr."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="benchdash-submit",
        description="Upload a result bundle to benchdash, wait for the verdict on its runs, print it, and exit 1 "
        "when --fail-on is met (2 on a usage or server error).",
    )
    p.add_argument("bundle", metavar="BUNDLE", help="the result bundle (.tar.gz, .tar.zst, .zip, …) to upload")
    p.add_argument("--url", required=True, help="the benchdash server, e.g. https://bench.example.com")
    p.add_argument("--token", help="an API token of a user with the uploader role (default: $BENCHDASH_TOKEN)")
    p.add_argument("--server", default="", help="the server (hardware) the runs used, over the bundle's manifest")
    p.add_argument("--workload", default="", help="the workload label, over the bundle's manifest")
    p.add_argument("--commit", default="", help="the git commit the build was made from")
    p.add_argument("--branch", default="", help="the branch of that commit")
    p.add_argument("--pull-request", type=int, default=None, metavar="N", help="the pull request number")
    p.add_argument("--repository", default="", help="owner/name, or the repository's URL (for links)")
    p.add_argument("--commit-time", default="", help="when the commit was made, ISO 8601")
    p.add_argument(
        "--base-branch",
        default=None,
        help="the branch runs are judged against (default: $BENCHDASH_BASE_BRANCH, else main); with no run of it "
        "on the same server, workload and config, the previous version's newest run",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="how long to wait for the verdict (0: upload only)",
    )
    p.add_argument("--format", choices=FORMATS, default="text", help="markdown: a pull-request comment")
    p.add_argument("--fail-on", choices=FAIL_ON, default="regression", help="what makes the exit status 1")
    p.add_argument("--output", default="", metavar="FILE", help="also write the verdict to FILE")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


class Client:
    def __init__(self, url: str, token: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise SubmitError(f"--url {url!r}: give the server's address, e.g. https://bench.example.com")
        self.base = url.rstrip("/")
        self.token = token

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        """The answer's body (JSON decoded when it is JSON); SubmitError on an HTTP error or no connection."""
        all_headers = {"Authorization": f"Bearer {self.token}", "User-Agent": f"benchdash-submit/{__version__}"}
        all_headers.update(headers or {})
        req = urllib.request.Request(self.base + path, data=body, headers=all_headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as response:
                return _decode(response.read(), response.headers.get("Content-Type", ""))
        except urllib.error.HTTPError as exc:
            detail = _detail(exc.read(), exc.headers.get("Content-Type", ""))
            raise SubmitError(f"{method} {path}: the server answered {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SubmitError(f"{method} {path}: could not reach {self.base}: {reason}") from None

    def upload(self, path: str, fields: dict[str, str]) -> dict[str, Any]:
        boundary = uuid.uuid4().hex
        head = b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
            if value
        )
        name = os.path.basename(path).replace('"', "_")
        head += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        size = len(head) + os.path.getsize(path) + len(tail)
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(size)}
        answer: dict[str, Any] = self.request("POST", "/api/bundles/", _streamed(head, path, tail), headers)
        return answer


def _streamed(head: bytes, path: str, tail: bytes) -> Iterator[bytes]:
    """The multipart body a chunk at a time: a bundle of gigabytes is never held whole in memory."""
    yield head
    with open(path, "rb") as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            yield chunk
    yield tail


def _decode(body: bytes, content_type: str) -> Any:
    text = body.decode("utf-8", errors="replace")
    return json.loads(text) if "json" in content_type else text


def _detail(body: bytes, content_type: str) -> str:
    try:
        answer = _decode(body, content_type)
    except ValueError:
        answer = body.decode("utf-8", errors="replace")
    if isinstance(answer, dict) and "detail" in answer:
        return str(answer["detail"])
    if isinstance(answer, dict) and answer.get("error"):
        return str(answer["error"])
    return str(answer).strip()[:500] or "(no message)"


def _wait_for_verdict(client: Client, bundle_id: int, base_branch: str, seconds: float) -> dict[str, Any]:
    """Ask for the verdict until it is no longer pending; SubmitError when the bundle failed or time ran out."""
    query = urllib.parse.urlencode({"base_branch": base_branch})
    deadline = time.monotonic() + seconds
    while True:
        verdict: dict[str, Any] = client.request("GET", f"/api/verdict/{bundle_id}?{query}")
        if verdict["state"] == "failed":
            raise SubmitError(
                f"bundle {bundle_id} could not be imported: {verdict['detail']} ({verdict['bundle_url']})"
            )
        if verdict["state"] == "ready":
            return verdict
        if time.monotonic() >= deadline:
            raise SubmitError(
                f"no verdict on bundle {bundle_id} within {seconds:g} s ({verdict['detail']}); "
                f"it stays at {verdict['bundle_url']} — raise --wait, or look there later"
            )
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))


def _report(client: Client, verdict: dict[str, Any], base_branch: str, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(verdict, indent=2) + "\n"
    query = urllib.parse.urlencode({"base_branch": base_branch, "format": fmt})
    text: str = client.request("GET", f"/api/verdict/{verdict['bundle_id']}?{query}")
    return text


def run(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("BENCHDASH_TOKEN", "")
    if not token:
        raise SubmitError("no API token: pass --token or set BENCHDASH_TOKEN (create one on benchdash's token page)")
    if not os.path.isfile(args.bundle):
        raise SubmitError(f"{args.bundle}: no such file")
    base_branch = args.base_branch if args.base_branch is not None else os.environ.get("BENCHDASH_BASE_BRANCH", "main")
    client = Client(args.url, token)
    fields = {
        "server": args.server,
        "workload": args.workload,
        "commit": args.commit,
        "branch": args.branch,
        "pull_request": "" if args.pull_request is None else str(args.pull_request),
        "repository": args.repository,
        "commit_time": args.commit_time,
    }
    bundle = client.upload(args.bundle, fields)
    print(f"uploaded as bundle {bundle['bundle_id']}: {bundle['url']} ({bundle['status']})", file=sys.stderr)
    if bundle["status"] == "failed":
        raise SubmitError(f"the bundle was refused: {bundle['error']}")
    if args.wait <= 0:
        return EXIT_OK
    verdict = _wait_for_verdict(client, bundle["bundle_id"], base_branch, args.wait)
    report = _report(client, verdict, base_branch, args.format)
    sys.stdout.write(report)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(report)
    return EXIT_FAIL if verdict["fails"][args.fail_on] else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)  # a usage error exits 2 here, with argparse's message on stderr
    try:
        return run(args)
    except SubmitError as exc:
        print(f"benchdash-submit: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
