"""Attach a run imported before under another series to the series a bundle meant it for.

A bundle's run whose result files were already imported under another server or
workload is skipped (the results are stored once) and reported on the bundle's
page. That series then lacks the run, often its base. Attaching stores the
results once more for the series the bundle named: a new run, in this bundle,
with its own identity (the content's hash bound to the series), so attaching
twice, or importing the same bundle with ``attach_existing = true`` in its
manifest, still gives one run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from runs.models import Bundle, Result, Run, RunFile, Server, Workload
from runs.signals import announce_import


class AttachError(Exception):
    """The run cannot be attached; the message says why, for the user."""


def attached_identity(content_sha256: str, server: str, workload: str) -> str:
    """The identity of results attached to one more series (the importer's ``attach_existing`` uses it too)."""
    return hashlib.sha256(f"{content_sha256}\0{server}\0{workload}".encode()).hexdigest()


@dataclass(frozen=True)
class Attachable:
    """A skipped run of a bundle that the bundle meant for another series than the one holding it."""

    holder_id: int
    name: str
    server: str  # of the series the bundle meant it for
    workload: str
    attached_run_id: int | None  # set once it is attached


def attachable(bundle: Bundle) -> dict[int, Attachable]:
    """The bundle's skipped runs held under another series, by the id of the run that holds them."""
    wanted = {
        int(entry["id"]): entry
        for entry in (bundle.stats or {}).get("skipped_runs", [])
        if entry.get("id") and isinstance(entry.get("attach_to"), Mapping)
    }
    if not wanted:
        return {}
    identities = {
        attached_identity(e["attach_to"]["content_sha256"], e["attach_to"]["server"], e["attach_to"]["workload"]): pk
        for pk, e in wanted.items()
    }
    attached = {
        identities[sha]: pk
        for sha, pk in Run.objects.filter(content_sha256__in=identities).values_list("content_sha256", "pk")
    }
    present = set(Run.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    return {
        pk: Attachable(pk, e.get("name", ""), e["attach_to"]["server"], e["attach_to"]["workload"], attached.get(pk))
        for pk, e in wanted.items()
        if pk in present
    }


def attach_run(bundle: Bundle, holder_id: int) -> tuple[Run, bool]:
    """Store the results of run ``holder_id`` for the series ``bundle`` meant them for: (run, created).

    All or nothing, and idempotent: the same attachment again returns the run made the first time.
    """
    entry = attachable(bundle).get(holder_id)
    if entry is None:
        raise AttachError(f"run {holder_id} is not a run of this bundle held under another series")
    content = next(e["attach_to"]["content_sha256"] for e in bundle.stats["skipped_runs"] if e.get("id") == holder_id)
    identity = attached_identity(content, entry.server, entry.workload)
    if entry.attached_run_id is not None:
        return Run.objects.get(pk=entry.attached_run_id), False
    try:
        with transaction.atomic():
            run = _copy(bundle, Run.objects.select_related("server", "workload").get(pk=holder_id), entry, identity)
    except IntegrityError:
        # Attached meanwhile (another click, another uploader): that run.
        return Run.objects.get(content_sha256=identity), False
    # The attached run is a run of this bundle now: its series is refreshed like after an import.
    transaction.on_commit(lambda: announce_import(bundle.pk))
    return run, True


def _copy(bundle: Bundle, holder: Run, entry: Attachable, identity: str) -> Run:
    server = Server.objects.filter(name=entry.server).first() or Server.objects.create(
        name=entry.server, cpus=holder.cpus
    )
    workload, _ = Workload.objects.get_or_create(
        suite=holder.workload.suite, name=entry.workload, defaults={"params": holder.workload.params}
    )
    copied: dict[str, Any] = {
        f.attname: getattr(holder, f.attname)
        for f in Run._meta.concrete_fields
        if f.attname not in ("id", "bundle_id", "server_id", "workload_id", "content_sha256", "created_at")
    }
    copied["warnings"] = [
        *holder.warnings,
        f"{holder.name}: the results of run {holder.pk} (server {holder.server.name!r}, workload "
        f"{holder.workload.name!r}), attached to this series from bundle {bundle.pk}",
    ]
    run = Run.objects.create(**copied, bundle=bundle, server=server, workload=workload, content_sha256=identity)
    skip = ("id", "run_id")
    Result.objects.bulk_create(
        Result(
            run=run, **{f.attname: getattr(r, f.attname) for f in Result._meta.concrete_fields if f.attname not in skip}
        )
        for r in Result.objects.filter(run=holder).order_by("pk")
    )
    RunFile.objects.bulk_create(
        RunFile(run=run, name=f.name, kind=f.kind, text=f.text)
        for f in RunFile.objects.filter(run=holder).order_by("pk")
    )
    return run
