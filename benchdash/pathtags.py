"""``{% load paths %}``: ``{% path "app:view" %}``, the address of a view without arguments, as ``{% url %}`` writes
it, reversed once per script prefix and URL conf (``benchdash.urlpattern.plain``): the page frame alone names sixteen
addresses, and a comparison page some thirty more."""

from __future__ import annotations

from django import template

from benchdash import urlpattern

register = template.Library()


@register.simple_tag
def path(name: str) -> str:
    return urlpattern.plain(name)
