"""What a deployment's settings say about its safety: reasons to refuse to start, and warnings.

Pure (no Django): ``benchdash/settings.py`` calls it with the values it read from the environment, raises on
the first refusal in production and prints the warnings at start-up in every process (web, worker, beat,
commands), so a deployment that looks like the demo, or a demo that looks like a deployment, is told so
before anyone relies on it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The demo's own key, and what people paste from examples: never a production secret.
DEMO_SECRET_KEY = "benchdash-demo-only-not-secret"
PLACEHOLDER_WORDS = ("change", "example", "placeholder", "secret-key", "your-", "<", "xxxx", "insecure")
MIN_SECRET_KEY_LENGTH = 32
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1", "testserver"})


@dataclass(frozen=True)
class Deployment:
    production: bool
    allowed_hosts: tuple[str, ...]
    database_engine: str
    broker: bool  # REDIS_URL set: a real Celery worker runs the tasks
    public_browsing: bool
    secure_cookies: bool
    database_password: str = ""


def secret_key_problem(key: str) -> str | None:
    """Why a SECRET_KEY cannot protect a production site, or None."""
    if not key:
        return "SECRET_KEY must be set"
    if key == DEMO_SECRET_KEY:
        return "SECRET_KEY is the demo's key, which is public"
    if len(key) < MIN_SECRET_KEY_LENGTH or len(set(key)) < 8:
        return f"SECRET_KEY must be a random string of {MIN_SECRET_KEY_LENGTH} characters or more"
    lowered = key.lower()
    if any(word in lowered for word in PLACEHOLDER_WORDS):
        return "SECRET_KEY looks like an example's placeholder; generate a random one"
    return None


def refusals(*, production: bool, debug: bool, secret_key: str, allowed_hosts: tuple[str, ...]) -> list[str]:
    """Reasons production mode must not start with these settings (empty in demo mode)."""
    if not production:
        return []
    found = []
    if debug:
        found.append("DEBUG must be off")
    if problem := secret_key_problem(secret_key):
        found.append(problem)
    if not allowed_hosts:
        found.append("ALLOWED_HOSTS must be set")
    elif "*" in allowed_hosts:
        found.append("ALLOWED_HOSTS must name the site's hosts, not '*'")
    return [f"{reason} when BENCHDASH_MODE=production" for reason in found]


def _names_a_public_host(hosts: tuple[str, ...]) -> bool:
    return any(host.strip().lstrip(".") not in LOOPBACK_HOSTS for host in hosts)


def deployment_warnings(deployment: Deployment) -> list[str]:
    """Settings that start but look wrong for the mode they run in."""
    if not deployment.production:
        if _names_a_public_host(deployment.allowed_hosts):
            return [
                "BENCHDASH_MODE is not 'production' but ALLOWED_HOSTS names a public host: this is the demo mode "
                "(DEBUG on, public browsing, a development key, cookies over http). Set BENCHDASH_MODE=production."
            ]
        return []
    found = []
    if deployment.database_engine.endswith("sqlite3"):
        found.append("no DATABASE_URL: production data would live in the demo's SQLite file")
    if not deployment.broker:
        found.append("no REDIS_URL: imports, refreshes and alerts run inside the web request, with no worker")
    if not _names_a_public_host(deployment.allowed_hosts):
        found.append("ALLOWED_HOSTS names only this machine: nobody else can open the site")
    if deployment.public_browsing:
        found.append("BENCHDASH_PUBLIC_BROWSING is on: anyone who reaches the site reads every result")
    if not deployment.secure_cookies:
        found.append("SECURE_COOKIES is off: logins travel over plain http (fine only without TLS on a trusted net)")
    if deployment.database_password in {"benchdash", "postgres", "password"}:
        found.append("the database password is an example's default")
    return found


def banner(lines: list[str]) -> str:
    """The warnings as a block that stands out in a log."""
    rule = "!" * 78
    body = "\n".join(f"! WARNING: {line}" for line in lines)
    return f"{rule}\n! benchdash settings look like the wrong mode:\n{body}\n{rule}\n"
