"""The CI verdict (``GET /api/verdict/{bundle_id}``): each run of a bundle against the newest run of the base branch,
judged by the noise model, as JSON and as a pull-request comment; uploads carry where the build's code came from."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from regressions.verdict import Noise, Rule, judge_cells, judge_groups
from runs import synthetic
from runs.models import Bundle, Run, SeriesDerived

pytestmark = pytest.mark.django_db

# A few tests of each group keep the imports quick; update-index is the one a pull request slows down.
TESTS = (*[t for t in synthetic.TESTS if not t[0].endswith(".pre")][:14], ("update-index", 100, 3800))


def bundle(seed: int, *, slower: float = 1.0, version: str = "8.0.36") -> bytes:
    steps = (synthetic.Step(0, "update-index", slower),) if slower != 1.0 else ()
    spec = synthetic.SeriesSpec(versions=(version,), steps=steps, seed=seed, tests=TESTS, noise=0.01)
    return synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": b'server = "ci-box"\n'})


@pytest.fixture
def upload(uploader: Client, django_capture_on_commit_callbacks: Any) -> Callable[..., dict[str, Any]]:
    def send(data: bytes, **fields: Any) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            response = uploader.post("/api/bundles/", {"file": SimpleUploadedFile("ci.tar.gz", data), **fields})
        assert response.status_code in (201, 202), response.content
        # Imported once the upload's transaction committed (the callbacks above): the bundle as it is now.
        return uploader.get(f"/api/bundles/{response.json()['bundle_id']}").json()

    return send


def verdict(client: Client, bundle_id: int, **params: str) -> Any:
    response = client.get(f"/api/verdict/{bundle_id}", params)
    assert response.status_code == 200, response.content
    return response.json() if params.get("format", "json") == "json" else response.content.decode()


def test_a_pull_request_that_slows_a_microbenchmark_is_a_regression_against_the_newest_main_run(
    upload: Callable[..., dict[str, Any]], uploader: Client
) -> None:
    upload(bundle(1), branch="main", commit="a" * 40, commit_time="2025-10-01T04:00:00Z", repository="acme/server")
    newest = upload(
        bundle(2), branch="main", commit="b" * 40, commit_time="2025-10-02T04:00:00Z", repository="acme/server"
    )
    pr = upload(
        bundle(3, slower=0.75),
        branch="faster-locks",
        pull_request="42",
        commit="c" * 40,
        commit_time="2025-10-02T09:00:00Z",
        repository="acme/server",
    )
    assert pr["runs"][0]["pull_request_url"] == "https://github.com/acme/server/pull/42"

    answer = verdict(uploader, pr["bundle_id"])
    assert answer["state"] == "ready"
    assert answer["fails"] == {"regression": True, "flag": True, "never": False}
    (run,) = answer["runs"]
    assert run["baseline"]["id"] == newest["runs"][0]["id"]
    assert run["against"] == "the newest run of main"
    moved = [c for c in run["cells"] if c["movement"] == "regression"]
    assert [c["label"] for c in moved] == ["update-index_range=100"]
    assert -0.30 < moved[0]["change"] < -0.20
    assert moved[0]["gate"] >= 0.05
    assert {g["movement"] for g in run["groups"]} <= {"unchanged", "within noise"}

    comment = verdict(uploader, pr["bundle_id"], format="markdown")
    assert "`update-index_range=100`" in comment
    assert "**−2" in comment  # the change, with its sign
    assert "the newest run of main" in comment
    assert "https://github.com/acme/server/pull/42" in comment
    assert f"/runs/{newest['runs'][0]['id']}/" in comment


def test_a_clean_pull_request_does_not_fail_and_a_main_run_is_judged_against_the_main_run_before_it(
    upload: Callable[..., dict[str, Any]], uploader: Client
) -> None:
    first = upload(bundle(1), branch="main", commit="a" * 12, commit_time="2025-10-01T04:00:00Z")
    later = upload(bundle(2), branch="main", commit="b" * 12, commit_time="2025-10-03T04:00:00Z")
    # Uploaded last, committed between the two: its baseline is the one committed before it.
    middle = upload(bundle(4), branch="main", commit="d" * 12, commit_time="2025-10-02T04:00:00Z")
    answer = verdict(uploader, middle["bundle_id"])
    assert answer["runs"][0]["baseline"]["id"] == first["runs"][0]["id"]
    assert answer["fails"]["regression"] is False

    clean = upload(bundle(5), branch="tidy-up", pull_request="43", commit="e" * 12)
    answer = verdict(uploader, clean["bundle_id"])
    assert answer["runs"][0]["baseline"]["id"] == later["runs"][0]["id"]
    assert answer["fails"]["regression"] is False
    assert "No microbenchmark moved beyond its noise gate" in verdict(uploader, clean["bundle_id"], format="markdown")


def test_without_a_base_branch_run_the_previous_version_is_the_baseline(
    upload: Callable[..., dict[str, Any]], uploader: Client
) -> None:
    older = upload(bundle(1, version="8.0.35"))
    newer = upload(bundle(2, version="8.0.36"))
    answer = verdict(uploader, newer["bundle_id"], base_branch="main")
    assert answer["runs"][0]["baseline"]["id"] == older["runs"][0]["id"]
    assert answer["runs"][0]["against"] == "the previous version, 8.0.35"
    first = verdict(uploader, older["bundle_id"])
    assert first["runs"][0]["baseline"] is None and first["fails"]["regression"] is False


def test_the_verdict_is_pending_until_detection_has_run_over_the_bundles_series(
    upload: Callable[..., dict[str, Any]], uploader: Client
) -> None:
    sent = upload(bundle(1), branch="main")
    assert verdict(uploader, sent["bundle_id"])["state"] == "ready"
    SeriesDerived.objects.all().delete()
    answer = verdict(uploader, sent["bundle_id"])
    assert answer["state"] == "pending" and "detection" in answer["detail"]
    assert answer["fails"] == {"regression": False, "flag": False, "never": False}
    assert uploader.get(f"/api/verdict/{sent['bundle_id'] + 1000}").status_code == 404


def test_bad_commit_fields_are_refused_naming_the_field_and_store_nothing(uploader: Client) -> None:
    for field, value in (("commit", "not-a-sha"), ("commit_time", "yesterday"), ("repository", "a b")):
        response = uploader.post("/api/bundles/", {"file": SimpleUploadedFile("x.tar.gz", bundle(1)), field: value})
        assert response.status_code == 400, response.content
        assert field in response.json()["detail"]
    assert not Bundle.objects.exists()


def test_the_manifest_says_where_the_code_came_from(upload: Callable[..., dict[str, Any]]) -> None:
    manifest = b'server = "ci-box"\ncommit = "ABCDEF1234"\nbranch = "main"\ncommit_time = 2025-10-01T04:12:00Z\n'
    spec = synthetic.SeriesSpec(versions=("8.0.36",), steps=(), seed=9, tests=TESTS)
    sent = upload(synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": manifest}))
    run = Run.objects.get(pk=sent["runs"][0]["id"])
    assert (run.commit, run.branch, run.commit_time.isoformat()) == ("abcdef1234", "main", "2025-10-01T04:12:00+00:00")


def test_create_token_prints_a_token_once_that_uploads(
    user_with_role: Callable[..., Any], capsys: pytest.CaptureFixture[str]
) -> None:
    user_with_role("uploader", "ci")
    call_command("create_token", "ci", "CI of acme/server")
    token = capsys.readouterr().out.strip()
    assert token.startswith("bd_")
    response = Client(headers={"Authorization": f"Bearer {token}"}).post("/api/bundles/", {})
    assert response.status_code == 422  # authenticated: the request lacks only its file
    with pytest.raises(Exception, match="no user 'nobody'"):
        call_command("create_token", "nobody", "CI")


def test_a_change_passes_the_gate_only_beyond_the_noise_of_its_microbenchmark() -> None:
    rule = Rule()
    quiet, noisy = [100.0, 101, 99.5, 100.5, 100, 99.8, 100.2], [100.0, 130, 80, 120, 90, 125, 85]
    this = {("a", 1): 90.0, ("b", 1): 90.0, ("c", 1): 97.0}
    base = {("a", 1): 100.0, ("b", 1): 100.0, ("c", 1): 100.0}
    cells = judge_cells(
        this, base, {("a", 1): quiet, ("b", 1): noisy, ("c", 1): quiet}, {"a": "g", "b": "g", "c": "g"}, rule
    )
    by = {c.label: c for c in cells}
    assert by["a"].movement == "regression" and by["a"].noise.source == "series"
    assert by["b"].movement == "within noise" and by["b"].gate > 0.3  # −10 % inside a ±30 % wobble
    assert by["c"].movement == "unchanged"
    assert Noise(0.02, "default", 2).text.startswith("σ 2.0% (default")
    (group,) = judge_groups(cells, ["g"], rule)
    assert group.summary.median == pytest.approx(0.90) and group.movement == "regression"


def test_the_run_page_links_the_commit_and_its_verdict_page_shows_what_moved_against_main(
    upload: Callable[..., dict[str, Any]], client: Client
) -> None:
    base = upload(bundle(1), branch="main", commit="a" * 40, repository="acme/server")
    pr = upload(
        bundle(3, slower=0.75),
        branch="faster-locks",
        pull_request="42",
        commit="c" * 40,
        repository="acme/server",
        commit_time="2025-10-02T09:00:00Z",
    )
    run_id = pr["runs"][0]["id"]
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert f'href="https://github.com/acme/server/commit/{"c" * 40}"' in page
    assert 'href="https://github.com/acme/server/pull/42">pull request #42' in page
    assert "committed 2025-10-02 09:00 UTC" in page
    assert f'href="/runs/{run_id}/verdict/"' in page

    verdict_page = client.get(f"/runs/{run_id}/verdict/").content.decode()
    assert 'id="mb-update-index_range-100-1" data-movement="regression"' in verdict_page
    assert verdict_page.count('data-movement="regression"') == 1
    assert f"/runs/{base['runs'][0]['id']}/" in verdict_page
    assert "1</strong> microbenchmark result moved beyond noise" in verdict_page
    other = client.get(f"/runs/{run_id}/verdict/", {"base_branch": "release-1"}).content.decode()
    assert "none: no run of release-1 and no run of an earlier version" in other


def test_nightlies_of_one_version_are_ordered_by_commit_time_on_the_timeline(
    upload: Callable[..., dict[str, Any]], client: Client
) -> None:
    # Uploaded in another order than committed: the timeline follows the commits.
    for seed, day in ((1, "03"), (2, "01"), (4, "02")):
        upload(bundle(seed), branch="main", commit=f"{seed}" * 12, commit_time=f"2025-10-{day}T04:00:00Z")
    run = Run.objects.order_by("pk").first()
    assert run is not None
    microbenchmark = run.results.get(microbenchmark__test="update-index").microbenchmark
    page = client.get(f"/microbenchmarks/{microbenchmark.pk}/timeline", {"base": run.pk}).content.decode()
    rows = re.findall(r"<td data-sort=\"([^\"]+)\">[^<]+<span class=\"muted\">\(commit\)</span>", page)
    assert [row[:10] for row in rows] == ["2025-10-01", "2025-10-02", "2025-10-03"]
    assert re.search(r"main @ <code>2{10}</code>.*main @ <code>4{10}</code>.*main @ <code>1{10}</code>", page, re.S)
