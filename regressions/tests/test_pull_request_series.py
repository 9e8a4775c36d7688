"""A pull request's runs (or another branch's) are no repeats of the main line's build of the same name: they are
judged against the base branch by the CI verdict, while the series, its comparisons and detection read the main
line alone. A run without any branch is in the main line, as before CI described runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from regressions.models import Regression
from reports.compare import ComparisonSpec, get_comparison
from reports.models import SeriesSummary
from runs import branches, synthetic
from runs.models import Microbenchmark, Run

pytestmark = pytest.mark.django_db

TESTS = (*[t for t in synthetic.TESTS if not t[0].endswith(".pre")][:6], ("update-index", 100, 3800))
SLOW = "update-index_range=100"


def bundle(seed: int, version: str, *, slower: float = 1.0) -> bytes:
    steps = (synthetic.Step(0, "update-index", slower),) if slower != 1.0 else ()
    spec = synthetic.SeriesSpec(versions=(version,), steps=steps, seed=seed, tests=TESTS, noise=0.005)
    return synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": b'server = "ci-box"\n'})


@pytest.fixture
def upload(uploader: Client, django_capture_on_commit_callbacks: Any) -> Callable[..., Run]:
    """Upload and import a bundle (its series refreshed, detection run, as after any upload); its one run."""

    def send(data: bytes, **fields: Any) -> Run:
        with django_capture_on_commit_callbacks(execute=True):
            response = uploader.post("/api/bundles/", {"file": SimpleUploadedFile("ci.tar.gz", data), **fields})
        assert response.status_code in (201, 202), response.content
        return Run.objects.get(bundle_id=response.json()["bundle_id"])

    return send


def _stories(run: Run) -> list[tuple[Any, ...]]:
    found = Regression.objects.filter(server_id=run.server_id, workload_id=run.workload_id).order_by("pk")
    return list(found.values_list("pk", "microbenchmark_id", "group", "kind", "change", "worst_change", "builds"))


def _column_of(comparison: Any, run: Run) -> Any:
    return next(c for c in comparison.columns if run.pk in c.run_ids)


def test_a_pull_requests_slow_run_is_no_repeat_of_main_opens_no_story_and_is_judged_against_main(
    upload: Callable[..., Run], uploader: Client
) -> None:
    old = upload(bundle(1, "8.0.35"), branch="main", commit="a" * 12)
    new = upload(bundle(2, "8.0.36"), branch="main", commit="b" * 12)
    stories = _stories(new)
    # A pull request's build of 8.0.36 (the same build name) that halves update-index.
    pr = upload(bundle(3, "8.0.36", slower=0.5), branch="faster-locks", pull_request="42", commit="c" * 12)
    # Detection read the main line: the stories are those before it, each as it was (as a repeat of 8.0.36 the
    # halving would have made update-index a quarter slower there, a story).
    assert _stories(new) == stories
    plain = upload(bundle(4, "8.0.36"))  # an unnamed run: a repeat, as before CI described runs
    assert (pr.build_id, plain.build_id) == (new.build_id, new.build_id)

    # The series' comparison: 8.0.36 is the main run and the unnamed one, averaged; the pull request's is no repeat.
    series = get_comparison(ComparisonSpec(base_run_id=old.pk))
    column = _column_of(series, new)
    assert sorted(column.run_ids) == sorted([new.pk, plain.pk])
    assert all(pr.pk not in c.run_ids for c in series.columns)
    assert 0.97 < series.relative[column.key][SLOW] < 1.03
    summary = SeriesSummary.objects.get(server_id=new.server_id, workload_id=new.workload_id)
    assert (summary.runs, summary.base_run_id) == (3, old.pk) and summary.latest_run_id in (new.pk, plain.pk)

    # The CI verdict judges the pull request against main's newest run: the regression is there.
    answer = uploader.get(f"/api/verdict/{pr.bundle_id}").json()
    (run,) = answer["runs"]
    assert run["baseline"]["id"] == new.pk and run["against"] == "the newest run of main"
    assert [c["label"] for c in run["cells"] if c["movement"] == "regression"] == [SLOW]
    assert answer["fails"]["regression"] is True

    # Compared by name, or as the base of its own comparison, the pull request's run is a column of its own.
    named = get_comparison(ComparisonSpec(base_run_id=old.pk, run_ids=(new.pk, pr.pk)))
    assert [c.key for c in named.columns][1:] == [new.name, f"{pr.name} [PR #42]"]
    assert 0.45 < named.relative[f"{pr.name} [PR #42]"][SLOW] < 0.55
    own = get_comparison(ComparisonSpec(base_run_id=pr.pk))
    assert _column_of(own, pr).run_ids == [pr.pk]
    assert sorted(_column_of(own, new).run_ids) == sorted([new.pk, plain.pk])


def test_the_timeline_of_main_leaves_a_pull_requests_runs_out_and_its_own_timeline_draws_them_apart(
    upload: Callable[..., Run], client: Client
) -> None:
    from reports.timeline import group_points, points

    first = upload(bundle(1, "8.0.36"), branch="main", commit="a" * 12, commit_time="2025-10-01T04:00:00Z")
    second = upload(bundle(2, "8.0.36"), branch="main", commit="b" * 12, commit_time="2025-10-03T04:00:00Z")
    pr = upload(
        bundle(3, "8.0.36", slower=0.5),
        branch="faster-locks",
        pull_request="42",
        commit="c" * 12,
        commit_time="2025-10-02T04:00:00Z",
    )
    mb = Microbenchmark.objects.get(test="update-index", range_size=100)
    found, _ = points(first, mb)
    # Main's nightly line: its two runs, the second compared with the first, not with the pull request's between.
    assert [(p.run_id, p.version) for p in found] == [(first.pk, "8.0.36"), (second.pk, "8.0.36")]
    assert 0.97 < (found[1].change or 0) < 1.03
    found, _ = points(pr, mb)
    assert [(p.run_id, p.version) for p in found] == [
        (first.pk, "8.0.36"),
        (pr.pk, "8.0.36 [PR #42]"),
        (second.pk, "8.0.36"),
    ]
    assert found[1].change is None  # the first of its own trace
    assert {p.run_id for p in group_points(first, [mb.pk], 1)} == {first.pk, second.pk}
    html = client.get(f"/microbenchmarks/{mb.pk}/timeline", {"base": pr.pk}).content.decode()
    assert "8.0.36 [PR #42]" in html


def test_a_branch_that_is_no_base_branch_stays_out_and_a_release_branch_joins(
    upload: Callable[..., Run], settings: Any
) -> None:
    base = upload(bundle(1, "8.0.36"), branch="8.0", commit="a" * 12)
    release = upload(bundle(2, "8.0.36"), branch="8.0", commit="b" * 12)
    experiment = upload(bundle(3, "8.0.36", slower=0.5), branch="try-new-btree", commit="c" * 12)
    series = get_comparison(ComparisonSpec(base_run_id=base.pk))
    assert [sorted(c.run_ids) for c in series.columns] == [sorted([base.pk, release.pk])]
    assert experiment.pk not in {r for c in series.columns for r in c.run_ids}

    # The base branches are the project's to say: with "develop" among them, that branch's runs are repeats.
    settings.BENCHDASH_BASE_BRANCHES = r"main|develop"
    assert branches.in_main_line("develop", None) and not branches.in_main_line("8.0", None)
    assert branches.in_main_line("", None) and not branches.in_main_line("develop", 7)
    assert branches.lane("develop", 7) == "PR #7" and branches.lane("8.0", None) == "branch 8.0"
    assert set(Run.objects.filter(branches.main_line()).values_list("pk", flat=True)) == set()
    Run.objects.filter(pk=experiment.pk).update(branch="develop")
    assert list(Run.objects.filter(branches.main_line()).values_list("pk", flat=True)) == [experiment.pk]


def test_the_default_base_branches() -> None:
    for branch in ("main", "master", "trunk", "10.11", "11.4", "8", ""):
        assert branches.in_main_line(branch, None), branch
    for branch in ("feature-x", "main-backup", "10.11-fix", "release/11.4", "mainline"):
        assert not branches.in_main_line(branch, None), branch
    assert not branches.in_main_line("main", 42)  # a pull request's run, whatever branch it names


def test_an_experiments_run_is_never_on_the_main_line_whatever_the_base_branches_say(
    upload: Callable[..., Run], settings: Any
) -> None:
    main = upload(bundle(1, "8.0.36"), branch="main", commit="a" * 12)
    trial = upload(bundle(2, "8.0.37", slower=0.5), branch=branches.experiment_branch("settings-7"))
    settings.BENCHDASH_BASE_BRANCHES = r".*"  # every branch a base branch: still not an experiment's
    assert not branches.in_main_line(trial.branch, None) and not branches.is_base_branch(trial.branch)
    assert list(Run.objects.filter(branches.main_line()).values_list("pk", flat=True)) == [main.pk]
    assert branches.lane(trial.branch, None) == "settings 7"
    # No new version point and no story: the series is the main run's alone.
    series = get_comparison(ComparisonSpec(base_run_id=main.pk))
    assert trial.pk not in {r for c in series.columns for r in c.run_ids}
    assert not Regression.objects.filter(server_id=trial.server_id, workload_id=trial.workload_id).exists()
