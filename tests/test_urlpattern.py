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
