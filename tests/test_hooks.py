"""Hooks (benchdash.hooks): every object an app lends by dotted path imports, is what its hook asks for, and
is what the asking module uses."""

from __future__ import annotations

from benchdash import hooks, pagecache
from regressions.markers import MARKERS
from regressions.metrics import deliveries_by_state
from regressions.search import find_bugs, open_records_note
from regressions.writeup import open_stories
from reports import markers, search
from runner.apps import confirmation_notes, hold_for_confirmation, settings_split_for
from runs.metrics import bundles_by_status

EVERY_HOOK = {
    hooks.MARKERS,
    hooks.SEARCH_SECTIONS,
    hooks.SEARCH_GROUP_NOTES,
    hooks.OPEN_STORIES,
    hooks.CONFIRMATION_HOLDERS,
    hooks.CONFIRMATION_NOTES,
    hooks.SETTINGS_SPLITS,
    hooks.PAGE_VARIANTS,
    hooks.METRIC_SOURCES,
}


def test_every_hook_is_provided_by_the_apps_ready_and_each_path_imports_the_object_meant() -> None:
    assert set(hooks.paths()) == EVERY_HOOK
    assert hooks.provided(hooks.MARKERS) == (MARKERS,)
    assert hooks.provided(hooks.SEARCH_SECTIONS) == (("bugs", "Bugs", find_bugs),)
    assert hooks.provided(hooks.SEARCH_GROUP_NOTES) == (open_records_note,)
    assert hooks.provided(hooks.OPEN_STORIES) == (open_stories,)
    assert hooks.provided(hooks.CONFIRMATION_HOLDERS) == (hold_for_confirmation,)
    assert hooks.provided(hooks.CONFIRMATION_NOTES) == (confirmation_notes,)
    assert hooks.provided(hooks.SETTINGS_SPLITS) == (settings_split_for,)
    assert set(hooks.provided(hooks.METRIC_SOURCES)) == {bundles_by_status, deliveries_by_state}
    (variant,) = hooks.provided(hooks.PAGE_VARIANTS)
    assert variant.__name__ == "abilities_fingerprint" and callable(variant)


def test_the_asking_modules_read_what_was_provided() -> None:
    assert markers._providers() == (MARKERS,)
    assert [kind for kind, _, _ in search._sections()] == ["bugs"]
    assert search._group_notes() == (open_records_note,)
    assert len(pagecache._variants()) == 1


def test_a_path_provided_after_a_hook_was_read_is_read_too_and_once_only() -> None:
    hook = "tests.hook"
    try:
        hooks.provide(hook, "regressions.search.find_bugs")
        assert hooks.provided(hook) == (find_bugs,)
        hooks.provide(hook, "regressions.search.open_records_note")
        hooks.provide(hook, "regressions.search.find_bugs")  # again: no second copy
        assert hooks.provided(hook) == (find_bugs, open_records_note)
    finally:
        hooks._PATHS.pop(hook, None)
        hooks._loaded.pop(hook, None)
