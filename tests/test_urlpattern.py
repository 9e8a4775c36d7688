from django.urls import clear_script_prefix, reverse, set_script_prefix

from benchdash import urlpattern


def test_an_address_by_id_is_what_reverse_gives_for_every_id() -> None:
    drilldown = urlpattern.by_id("reports:drilldown")
    for pk in (1, 26, 2_147_483_646, 2_147_483_647, 10**12):
        assert drilldown(pk) == reverse("reports:drilldown", args=[pk])


def test_an_address_by_id_keeps_the_script_prefix_of_the_request_it_is_made_in() -> None:
    set_script_prefix("/bench/")
    try:
        record = urlpattern.by_id("regressions:regression")
        assert record(7) == "/bench/regressions/7/" == reverse("regressions:regression", args=[7])
    finally:
        clear_script_prefix()


def test_an_address_without_arguments_is_what_reverse_gives_under_each_script_prefix() -> None:
    names = ("reports:compare", "reports:relative_table", "reports:home", "api:compare")
    assert [urlpattern.plain(name) for name in names] == [reverse(name) for name in names]
    set_script_prefix("/bench/")
    try:
        assert urlpattern.plain("reports:compare") == "/bench/compare/" == reverse("reports:compare")
    finally:
        clear_script_prefix()
    assert urlpattern.plain("reports:compare") == reverse("reports:compare") == "/compare/"
