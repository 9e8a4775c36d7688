"""What an alert says and the rules on its inputs, without a database."""

from __future__ import annotations

import pytest

from regressions import alert_message as am

FACTS = am.AlertFacts(
    story_id=7,
    url="https://bench.example.com/regressions/7/",
    dbms="MariaDB",
    server="c2d-highcpu-32",
    workload="8 tables, 10M rows, 12 threads",
    subject="point-query_range=100",
    is_group=False,
    kind="regression",
    change=-0.121,
    level_before=1.02,
    level_after=0.8966,
    arrived_in="10.11.8",
    previous_version="10.6.18",
    noise=0.012,
    noise_source="repeats",
    threshold=0.05,
    builds=("ma100618_rel_withdbg", "ma101108_rel_withdbg"),
    bugs=(am.BugLink("MDEV-33894", "https://jira.mariadb.org/browse/MDEV-33894"),),
    summary="−12.1% in 10.11.8, still there",
)


def test_the_text_names_series_subject_step_versions_noise_builds_bugs_and_the_link() -> None:
    lines = am.text(FACTS).splitlines()
    assert lines == [
        "New regression story: −12.1% in 10.11.8, still there",
        "Series: MariaDB on c2d-highcpu-32, workload 8 tables, 10M rows, 12 threads",
        "Subject: microbenchmark point-query_range=100",
        "Step at arrival: −12.1%",
        "Arrived in: 10.11.8 (vs 10.6.18)",
        "Noise: σ 1.2% per point (repeats); the step had to pass 5.0%",
        "Builds: ma100618_rel_withdbg, ma101108_rel_withdbg",
        "Bugs: MDEV-33894 <https://jira.mariadb.org/browse/MDEV-33894>",
        "Story: https://bench.example.com/regressions/7/",
    ]
    assert am.subject_line(FACTS) == (
        "[benchdash] regression −12.1% in MariaDB 10.11.8: point-query_range=100 on c2d-highcpu-32"
    )


def test_a_group_story_without_a_previous_version_or_noise_says_so() -> None:
    from dataclasses import replace

    facts = replace(FACTS, is_group=True, subject="point-1", previous_version=None, noise=None, bugs=(), builds=())
    text = am.text(facts)
    assert "Subject: group point-1" in text and "(no earlier version at the old level)" in text
    assert "Noise: unknown (repeats)" in text and "Bugs: none linked" in text and "Builds: –" in text
    assert "group point-1 on" in am.subject_line(facts)


def test_the_slack_body_is_only_text_and_the_json_body_carries_every_fact() -> None:
    slack = am.webhook_body(FACTS, am.SLACK)
    assert set(slack) == {"text"} and slack["text"].startswith(am.subject_line(FACTS) + "\n")
    body = am.webhook_body(FACTS, am.JSON)
    assert body["event"] == "story_opened" and body["text"] == am.text(FACTS)
    assert body["story"]["previous_version"] == "10.6.18" and body["story"]["change"] == -0.121
    assert body["story"]["bugs"] == [{"label": "MDEV-33894", "url": "https://jira.mariadb.org/browse/MDEV-33894"}]
    with pytest.raises(ValueError, match="unknown webhook format"):
        am.webhook_body(FACTS, "xml")


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://hooks.slack.com/services/T0/B0/x", True),
        ("http://127.0.0.1:8080/hook", True),
        ("HTTPS://Example.com/", True),
        ("ftp://example.com/x", False),
        ("example.com/hook", False),
        ("mailto:a@example.com", False),
        ("https:///nohost", False),
        ("http://example.com:0x50/", False),
    ],
)
def test_only_http_and_https_urls_with_a_host_are_webhooks(url: str, ok: bool) -> None:
    assert (am.webhook_url_problem(url) is None) is ok


def test_addresses_are_split_as_pasted_and_non_addresses_named() -> None:
    raw = " a@example.com,b@example.org;\n c@lab.example.net  nope  x@y"
    addresses = am.split_addresses(raw)
    assert addresses == ["a@example.com", "b@example.org", "c@lab.example.net", "nope", "x@y"]
    assert am.bad_addresses(addresses) == ["nope", "x@y"]


def test_the_retry_wait_doubles_from_the_base_up_to_the_cap() -> None:
    assert [am.backoff(n, 30, 600) for n in range(1, 8)] == [30, 60, 120, 240, 480, 600, 600]
    assert am.backoff(1, 0, 600) == 0


def test_a_listed_webhook_shows_its_host_and_only_the_end_of_its_path() -> None:
    assert am.masked_url("https://hooks.slack.com/services/T0/B0/abcdefgh") == "https://hooks.slack.com/…efgh"
    assert am.masked_url("http://127.0.0.1:8080/hook?token=s3cr3t9") == "http://127.0.0.1:8080/…r3t9"
    assert am.masked_url("https://example.com/") == "https://example.com/"


def test_the_subject_line_stays_one_line_whatever_the_names_hold() -> None:
    from dataclasses import replace

    facts = replace(FACTS, server="lab\r\nBcc: everyone@example.com")
    assert "\n" not in am.subject_line(facts) and "\r" not in am.subject_line(facts)
    assert am.subject_line(facts).endswith("on lab Bcc: everyone@example.com")


def test_the_figures_are_labelled_step_at_arrival_now_and_base() -> None:
    from dataclasses import replace

    from regressions.figures import story_figures

    figures = story_figures(
        metric="qps",
        change=-0.393,
        current_change=-0.51,
        level_before=1.0,
        level_after=0.49,
        arrived_in="8.0.30",
        previous_version="8.0.28",
        latest_version="9.5.0",
        events=[{"kind": "arrival", "change": -0.393, "level": 0.607, "previous_level": 1.0, "against": "8.0.28"}],
        base="x.my8028_rel.z12a.pk1",
    )
    lines = am.text(replace(FACTS, figures=figures)).splitlines()
    assert lines[3:6] == [
        "Step at arrival: −39.3% at 8.0.30 against 8.0.28 (relative QPS 1.00 → 0.61)",
        "Now: −51.0% at 9.5.0 against 8.0.28 (relative QPS 0.49)",
        "Base: x.my8028_rel.z12a.pk1",
    ]
    assert am.webhook_body(replace(FACTS, figures=figures), am.JSON)["story"]["figures"]["now"]["change"] == -0.51
