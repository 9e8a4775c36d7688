"""Triage and bug links: what people do with a story's record, each step logged as a ``TriageEvent``.

Triage is one across release views: a story told in the default view and over every release (the same
series, subject, metric, direction and arrival) is two records, and a state or a bug given to one is given to
the other too (``with_other_views``), so the list reads the same triage whichever view it shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from regressions import bugs as bugrefs
from regressions.models import Bug, Regression, TriageEvent

State = Regression.State


def _actor(user: Any) -> Any:
    """The user to log, or None for an anonymous or absent one (a task or the command)."""
    return user if user is not None and user.is_authenticated else None


def triage(
    regression_ids: Iterable[int], to_state: str, user: AbstractBaseUser | AnonymousUser | None, note: str = ""
) -> int:
    """Move regressions to ``to_state``, writing one TriageEvent each; returns how many changed state.

    Records already in ``to_state`` are left alone unless a note is given, which
    is then logged as an event of its own (the audit log keeps every word).
    """
    if to_state not in State.values:
        raise ValueError(f"unknown state {to_state!r}; one of {', '.join(State.values)}")
    asked = list(regression_ids)
    actor = _actor(user)
    with transaction.atomic():
        ids = with_other_views(asked)
        rows = list(Regression.objects.select_for_update().filter(pk__in=ids).values_list("pk", "state"))
        moving = [(pk, state) for pk, state in rows if state != to_state]
        logged = moving if not note else rows
        Regression.objects.filter(pk__in=[pk for pk, _ in moving]).update(state=to_state, updated_at=timezone.now())
        TriageEvent.objects.bulk_create(
            TriageEvent(regression_id=pk, user=actor, from_state=state, to_state=to_state, note=note)
            for pk, state in logged
        )
    return len([pk for pk, _ in moving if pk in set(asked)])


def with_other_views(regression_ids: Sequence[int]) -> list[int]:
    """The records and the same stories' records in the other release view: same series, microbenchmark or
    group, direction, metric and arrival (one query)."""
    ids = list(dict.fromkeys(regression_ids))
    found = Regression.objects.filter(pk__in=ids).values_list(
        "server_id", "workload_id", "microbenchmark_id", "group", "kind", "metric", "arrived_in_id", "releases"
    )
    same = Q(pk__in=[])
    for server_id, workload_id, microbenchmark_id, group, kind, metric, arrived_in_id, view in found:
        subject = (
            Q(microbenchmark_id=microbenchmark_id) if microbenchmark_id else Q(microbenchmark__isnull=True, group=group)
        )
        same |= (
            subject
            & Q(server_id=server_id, workload_id=workload_id, kind=kind, metric=metric, arrived_in_id=arrived_in_id)
            & ~Q(releases=view)
        )
    others = Regression.objects.filter(same).values_list("pk", flat=True) if found else []
    return [*ids, *(pk for pk in others if pk not in ids)]


@dataclass
class LinkResult:
    bug: Bug
    linked: list[int]  # regressions the bug was newly linked to (the first one included)
    carried: list[int]  # of those, the regressions on other servers
    filed: list[int] = field(default_factory=list)  # of those, the ones the link moved to "bug filed"


def link_bug(
    regression: Regression,
    key_or_url: str,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    title: str = "",
    carry: bool = False,
) -> LinkResult:
    """Link a bug (key or URL, see ``regressions.bugs``) to a regression; ValueError for a reference that is none.

    With ``carry`` the bug is also linked to the same regression on other servers
    (``same_regression_elsewhere``). New and acknowledged records move to "bug
    filed"; every link is a TriageEvent.
    """
    return link_bug_to_many([regression.pk], key_or_url, user=user, title=title, carry=carry)


def link_bug_to_many(
    regression_ids: Iterable[int],
    key_or_url: str,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    title: str = "",
    carry: bool = False,
) -> LinkResult:
    ref = bugrefs.parse(key_or_url)
    with transaction.atomic():
        ids = with_other_views(list(regression_ids))
        bug, created = Bug.objects.get_or_create(
            tracker=ref.tracker, key=ref.key, defaults={"url": ref.url, "title": title}
        )
        if title and not created and not bug.title:
            bug.title = title
            bug.save(update_fields=["title"])
        targets = list(Regression.objects.filter(pk__in=ids).select_related("arrived_in", "previous_version"))
        carried: list[int] = []
        if carry:
            for regression in targets:
                carried.extend(same_regression_elsewhere(regression).values_list("pk", flat=True))
            carried = [pk for pk in dict.fromkeys(carried) if pk not in ids]
        linked, filed = _link(bug, [*[r.pk for r in targets], *carried], user, carried=set(carried))
    return LinkResult(bug=bug, linked=linked, carried=[pk for pk in carried if pk in linked], filed=filed)


def _link(bug: Bug, regression_ids: Sequence[int], user: Any, *, carried: set[int]) -> tuple[list[int], list[int]]:
    """Link in a fixed number of queries however many regressions; returns the ids newly linked and, of those,
    the ones moved to "bug filed"."""
    through = Regression.bugs.through
    already = set(
        through.objects.filter(bug=bug, regression_id__in=regression_ids).values_list("regression_id", flat=True)
    )
    new = [pk for pk in regression_ids if pk not in already]
    through.objects.bulk_create([through(bug=bug, regression_id=pk) for pk in new], ignore_conflicts=True)
    states = dict(Regression.objects.filter(pk__in=new).values_list("pk", "state"))
    to_filed = [pk for pk in new if states.get(pk) in (State.NEW, State.ACKNOWLEDGED)]
    Regression.objects.filter(pk__in=to_filed).update(state=State.BUG_FILED, updated_at=timezone.now())
    actor = _actor(user)
    TriageEvent.objects.bulk_create(
        TriageEvent(
            regression_id=pk,
            user=actor,
            from_state=states[pk],
            to_state=State.BUG_FILED if pk in to_filed else states[pk],
            note=f"linked {bug.label}" + (" (carried from another server)" if pk in carried else ""),
        )
        for pk in new
        if pk in states
    )
    return [pk for pk in new if pk in states], to_filed


def unlink_bug(regression: Regression, bug: Bug, *, user: AbstractBaseUser | AnonymousUser | None = None) -> bool:
    removed, _ = Regression.bugs.through.objects.filter(regression=regression, bug=bug).delete()
    if removed:
        TriageEvent.objects.create(
            regression=regression,
            user=_actor(user),
            from_state=regression.state,
            to_state=regression.state,
            note=f"unlinked {bug.label}",
        )
    return bool(removed)


def same_regression_elsewhere(regression: Regression) -> QuerySet[Regression]:
    """The same change on other servers: same DBMS, kind and microbenchmark (or group), arriving at the same place.

    "The same place" is an overlap of the version intervals (previous version,
    arrived in]: a server that tested 8.0.28 and 8.0.32 sees at 8.0.32 what one
    that tested every release sees at 8.0.30.
    """
    found = Regression.objects.exclude(server_id=regression.server_id).filter(
        kind=regression.kind, metric=regression.metric, arrived_in__dbms_id=regression.arrived_in.dbms_id
    )
    if regression.microbenchmark_id is not None:
        found = found.filter(microbenchmark_id=regression.microbenchmark_id)
    else:
        found = found.filter(microbenchmark__isnull=True, group=regression.group)
    arrived = regression.arrived_in.sort_key
    if regression.previous_version is None:
        return found.filter(arrived_in__sort_key=arrived)
    return found.filter(arrived_in__sort_key__gt=regression.previous_version.sort_key).filter(
        Q(previous_version__sort_key__lt=arrived) | Q(previous_version__isnull=True, arrived_in__sort_key=arrived)
    )
