"""A hostile bundle (the real MySQL series under a server and workload named with markup, mentions, quotes and
non-ASCII) through every export and alert channel: downloads answer 200 with safe names, Markdown carries no
markup of the bundle's, Slack's text no mention or link of the bundle's, mail headers stay one line."""

from __future__ import annotations

import io
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from regressions.detection import detect_regressions
from regressions.models import Regression, Subscription
from regressions.tasks import announce_story_task
from regressions.tests.loopback import HttpReceiver, SmtpServer, http_receiver, smtp_server
from regressions.triage import link_bug
from reports.exports import FORMATS
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db

SERVER = 'pn53 "<img src=x onerror=alert(1)>" <!channel> *b* |c| [l](http://evil.example) é'
WORKLOAD = "<script>alert(2)</script> `tick` _em_ <https://evil.example|click here> &amp;"
MARKUP = ("<img", "<script", "<!channel>", "<https://evil.example", "](http://evil.example)")


@pytest.fixture
def hostile_base(tmp_path: Path, corpus: Path) -> Run:
    bundle = tmp_path / "hostile"
    shutil.copytree(corpus / "sysbench-mysql-small", bundle)
    quoted = {k: v.replace("\\", "\\\\").replace('"', '\\"') for k, v in (("s", SERVER), ("w", WORKLOAD))}
    (bundle / "benchdash.toml").write_text(f'server = "{quoted["s"]}"\nworkload = "{quoted["w"]}"\n')
    submit_and_import(archive_directory(bundle), name="hostile.tar.gz", source=Bundle.Source.COMMAND)
    base = Run.objects.select_related("server", "workload").get(name__startswith="x.my5651")
    assert (base.server.name, base.workload.name) == (SERVER, WORKLOAD)
    detect_regressions(base.server_id, base.workload_id)
    story = Regression.objects.filter(pk__in=[r.pk for r in Regression.objects.all() if r.is_open_story]).first()
    assert story is not None
    link_bug(story, "MDEV-33894", user=None)
    return base


def _safe_disposition(header: str) -> None:
    assert header.isascii() and header.isprintable() and header.startswith("attachment; filename=")
    assert not re.search(r'filename="[^"]*["\\<>]', header.split('"', 1)[1] if '"' in header else "")


def _no_markup(text: str, markup_of: tuple[str, ...] = MARKUP) -> None:
    for markup in markup_of:
        assert markup not in text, markup


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_of_the_hostile_series_answers_with_a_safe_file_name(hostile_base: Run, fmt: str) -> None:
    response = Client().get("/compare/export", {"base": hostile_base.pk, "format": fmt})
    assert response.status_code == 200
    _safe_disposition(response["Content-Disposition"])
    assert "filename*=UTF-8''" in response["Content-Disposition"]  # the name keeps its é there
    if fmt == "markdown":
        _no_markup(response.content.decode())


def test_the_write_up_and_its_zip_escape_every_name_of_the_bundle(hostile_base: Run) -> None:
    client = Client()
    text_response = client.get("/compare/writeup", {"base": hostile_base.pk})
    assert text_response.status_code == 200
    _safe_disposition(text_response["Content-Disposition"])
    text = text_response.content.decode()
    _no_markup(text)
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "\\[l\\](http\\://evil.example)" in text
    assert "\\*b\\* \\|c\\|" in text and "\\_em\\_" in text and "&amp;amp;" in text
    zipped = client.get("/compare/writeup", {"base": hostile_base.pk, "format": "zip"})
    assert zipped.status_code == 200
    _safe_disposition(zipped["Content-Disposition"])
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        _no_markup(archive.read("writeup.md").decode())
        assert all(not name.startswith(("/", "..")) for name in archive.namelist())


@pytest.fixture
def receiver(settings: Any) -> Iterator[HttpReceiver]:
    settings.BENCHDASH_ALERT_NETWORKS = ["127.0.0.1/32"]
    settings.BENCHDASH_ALERT_RETRY_DELAY = 0
    with http_receiver() as r:
        yield r


@pytest.fixture
def smtp(settings: Any) -> Iterator[SmtpServer]:
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        yield server


def test_alerts_about_the_hostile_series_escape_slack_text_and_keep_mail_headers_to_one_line(
    hostile_base: Run, receiver: HttpReceiver, smtp: SmtpServer
) -> None:
    Subscription.objects.create(name="slack", webhook_url=receiver.url("/slack"), webhook_format="slack")
    Subscription.objects.create(name="json", webhook_url=receiver.url("/json"))
    Subscription.objects.create(name="mail", emails="perf@example.com")
    story = Regression.objects.filter(bugs__isnull=False).first()
    assert story is not None
    announce_story_task.delay(story.pk)
    slack = next(r for r in receiver.requests if r.path == "/slack").json()["text"]
    # Slack's rules: only <…> makes a link or a mention there ([l](…) is plain text to Slack).
    _no_markup(slack, tuple(m for m in MARKUP if m.startswith("<")))
    assert "&lt;!channel&gt;" in slack and "&lt;https://evil.example|click here&gt;" in slack
    # The message's own link to the bug stays a link.
    assert "MDEV-33894 <https://jira.mariadb.org/browse/MDEV-33894>" in slack
    # The JSON body keeps the names as they are: its receiver's code decides how to show them.
    assert next(r for r in receiver.requests if r.path == "/json").json()["story"]["server"] == SERVER
    (mail,) = smtp.mails
    assert "\n" not in mail.subject and "\r" not in mail.subject and "<!channel>" in mail.subject
