"""When "settings or code?" is offered for two runs, and why not: the pure split, the settings a target can take,
and the offer's reasons (no server here: the runs' captured settings are stored as an import stores them)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.test import Client

from runner import experiments, server_settings
from runner.models import BenchmarkRun, SettingsExperiment, Target
from runs.experiments import MicrobenchmarkSplit, RunPair, SettingRow, SettingsSplit
from runs.models import Run, RunFile
from tests.factories import RunFactory, TargetFactory

LABEL = "update-index_range=100"


def test_the_factors_multiply_back_to_the_total_per_test_and_over_the_tests() -> None:
    tests = (
        MicrobenchmarkSplit(LABEL, 1, 8000.0, 240.0, 8400.0),
        MicrobenchmarkSplit("insert_range=100", 4, 5000.0, 4000.0, 4100.0),
    )
    split = SettingsSplit(state="done", tests=tests, sigma=0.02)
    for t in tests:
        assert math.isclose(t.total, t.defaults * t.code, rel_tol=1e-12)
    assert math.isclose(tests[0].defaults, 240 / 8400) and math.isclose(tests[0].code, 8400 / 8000)
    assert split.total is not None and split.defaults is not None and split.code is not None
    assert math.isclose(split.total, split.defaults * split.code, rel_tol=1e-12)
    assert math.isclose(split.total, math.sqrt(240 / 8000 * 4000 / 5000))
    assert split.gate is not None and math.isclose(split.gate, 2 * math.sqrt(2) * 0.02)


@pytest.mark.parametrize(
    ("with_old", "verdict"),
    [
        (1000.0, "The change comes from the changed defaults; the code's part is within noise."),
        (500.0, "The change comes from the code; the changed defaults' part is within noise."),
        (700.0, "The change comes from both the changed defaults and the code."),
    ],
)
def test_the_verdict_says_which_part_is_beyond_the_noise(with_old: float, verdict: str) -> None:
    # old 1000 QPS, new 500: all the defaults' when the old settings bring back 1000, all the code's when they do not.
    split = SettingsSplit(state="done", tests=(MicrobenchmarkSplit(LABEL, 1, 1000.0, 500.0, with_old),), sigma=0.01)
    assert split.verdict == verdict
    assert "no noise model σ to judge them by" in SettingsSplit(state="done", tests=split.tests).verdict


def test_a_split_with_a_setting_not_applied_is_partial() -> None:
    rows = (SettingRow("max_error_count", "100", "64", True), SettingRow("back_log", "77", "80", False, "read only"))
    split = SettingsSplit(state="done", settings=rows)
    assert split.partial and [r.name for r in split.not_applied] == ["back_log"]
    assert not SettingsSplit(state="done", settings=rows[:1]).partial


def test_what_a_target_takes() -> None:
    assert server_settings.takes_settings("mariadb", True) is None
    assert server_settings.takes_settings("mysql", True) is None
    assert "allow settings experiments" in (server_settings.takes_settings("mariadb", False) or "")
    assert "PostgreSQL" in (server_settings.takes_settings("postgres", True) or "")
    assert server_settings.refusal("innodb_flush_log_at_trx_commit", "0") is None
    assert "old version has no such setting" in (server_settings.refusal("innodb_new_thing", None) or "")
    assert "availability or logs" in (server_settings.refusal("read_only", "OFF") or "")
    assert server_settings.refusal("x`; DROP TABLE t; --", "1") == "not a server variable name"


def _variables(run: Run, **values: str) -> None:
    base = {"version": run.build.version.text, "max_connections": "151", "innodb_flush_log_at_trx_commit": "1"}
    text = "".join(f"{k}\t{v}\n" for k, v in {**base, **values}.items())
    RunFile.objects.create(run=run, name="sb.gv.start", kind=RunFile.Kind.VARIABLES, text=text)


@pytest.fixture
def pair(db: None) -> tuple[Run, Run]:
    old = RunFactory(build__version__text="10.11.19", build__name="ma101119_rel")
    new = RunFactory(
        build__version__text="11.4.2",
        build__version__dbms=old.build.version.dbms,
        build__name="ma110402_rel",
        server=old.server,
        workload=old.workload,
        config=old.config,
    )
    _variables(old, innodb_flush_log_at_trx_commit="0", innodb_old_only="1")
    _variables(new)
    return old, new


def _made_by(run: Run, **target: Any) -> Target:
    made = TargetFactory(name=f"t-{run.pk}", build_label=run.build.name, **target)
    BenchmarkRun.objects.create(
        target=made, bundle=run.bundle, state=BenchmarkRun.State.IMPORTED, microbenchmarks=[LABEL], threads=[1]
    )
    return made


@pytest.mark.django_db
def test_an_uploaded_new_run_has_no_target_to_re_run(pair: tuple[Run, Run]) -> None:
    old, new = pair
    split = experiments.split_for(RunPair(old.pk, new.pk, (LABEL,)))
    assert split is not None and split.state == "unavailable" and not split.start_url
    assert "not made by a benchmark target here" in split.reason
    # What differs, and what no target could take.
    rows = {r.name: r for r in split.settings}
    assert (rows["innodb_flush_log_at_trx_commit"].old, rows["innodb_flush_log_at_trx_commit"].applied) == ("0", None)
    assert rows["innodb_old_only"].applied is False and "new version has no such" in rows["innodb_old_only"].reason


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("target", "reason"),
    [({"settings_experiments": False}, "allow settings experiments"), ({"postgres": True}, "PostgreSQL")],
)
def test_a_target_that_takes_no_settings_is_not_offered_and_says_why(
    pair: tuple[Run, Run], target: dict[str, Any], reason: str, user_with_role: Any, client: Client
) -> None:
    old, new = pair
    _made_by(new, **target)
    split = experiments.split_for(RunPair(old.pk, new.pk, (LABEL,)))
    assert split is not None and split.state == "unavailable" and reason in split.reason
    client.force_login(user_with_role("uploader"))
    response = client.post(
        "/benchmarks/settings-experiments/", {"old_run": old.pk, "new_run": new.pk, "labels": LABEL, "next": "/"}
    )
    assert response.status_code == 302 and not SettingsExperiment.objects.exists()


@pytest.mark.django_db
def test_runs_that_differ_in_no_setting_offer_nothing(pair: tuple[Run, Run]) -> None:
    old, new = pair
    RunFile.objects.filter(run=old).update(text=RunFile.objects.get(run=new).text)
    assert experiments.split_for(RunPair(old.pk, new.pk, (LABEL,))) is None


@pytest.mark.django_db
def test_the_offer_starts_one_experiment_on_the_target_that_made_the_new_run(
    pair: tuple[Run, Run], user_with_role: Any, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    old, new = pair
    made = _made_by(new, settings_experiments=True)
    split = experiments.split_for(RunPair(old.pk, new.pk, (LABEL, "not-a-runnable-test")))
    assert split is not None and split.state == "offered" and split.form["labels"] == LABEL
    viewer = user_with_role("viewer")
    client.force_login(viewer)
    fields = {**split.form, "next": "/diff/"}
    assert client.post(split.start_url, fields).status_code == 403
    client.force_login(user_with_role("uploader", "perf"))
    sent: list[Any] = []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first = client.post(split.start_url, fields)
        again = client.post(split.start_url, fields)  # still queued: the same experiment, not a second
    sent.extend(callbacks)
    assert first.status_code == again.status_code == 302 and first["Location"] == "/diff/"
    run = BenchmarkRun.objects.get(settings_experiment__isnull=False)
    assert (run.target, run.microbenchmarks, run.state) == (made, [LABEL], BenchmarkRun.State.QUEUED)
    experiment = run.settings_experiment
    assert experiment is not None
    assert experiment.wanted == [{"name": "innodb_flush_log_at_trx_commit", "old": "0", "new": "1"}]
    assert [r["name"] for r in experiment.refused] == ["innodb_old_only"]
    assert len(sent) == 1  # one run sent to the queue
    queued = experiments.split_for(RunPair(old.pk, new.pk, (LABEL,)))
    assert queued is not None and queued.state == "queued" and not queued.start_url
