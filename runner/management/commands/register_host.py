"""``manage.py register_host NAME [--targets T …]``: run on a benchmark machine, with the project's settings (the
same DATABASE_URL its worker uses), it registers the machine as benchmark host NAME with the hardware facts read
from it (cores, memory, CPU model, kernel, OS, disks) and prints the command that starts its worker.

Idempotent: run again (after a hardware or kernel change, or to change the targets) it updates the same host.
``--targets`` sets the targets it reaches to exactly those named; without it they are left as they are. A name
that is no target is refused and nothing is changed.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from runner import hostfacts
from runner.models import TOKEN, BenchmarkHost, Target


class Command(BaseCommand):
    help = (
        "Register this machine as benchmark host NAME (created, or updated when it exists) with its hardware facts "
        "read from the machine, and the targets it reaches; prints the command that starts its worker."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the host's name: letters, digits, _ and - (its queue is bench-host-NAME)")
        parser.add_argument(
            "--targets",
            nargs="*",
            metavar="TARGET",
            help="names of the targets this machine reaches (replaces the host's list; --targets alone empties it)",
        )
        parser.add_argument("--storage", help="describe the storage yourself instead of the disks found")
        parser.add_argument("--notes", help="anything else about the machine: governor, BIOS settings, …")
        parser.add_argument(
            "--dry-run", action="store_true", help="print the facts that would be recorded and change nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        try:
            TOKEN(name)
        except ValidationError:
            raise CommandError(f"{name!r} cannot be a host name: letters, digits, _ and - only") from None
        if len(name) > BenchmarkHost._meta.get_field("name").max_length:  # type: ignore[operator]
            raise CommandError(f"{name!r} is too long for a host name (at most 100 characters)")
        targets = self._targets(options["targets"])
        facts = hostfacts.collect()
        values: dict[str, Any] = {
            "cpus": facts.cpus,
            "ram_gb": facts.ram_gb,
            "cpu_model": facts.cpu_model,
            "kernel": facts.kernel,
            "os": facts.os,
            "storage": (options["storage"] if options["storage"] is not None else facts.storage)[:200],
        }
        if options["notes"] is not None:
            values["notes"] = options["notes"]
        if options["dry_run"]:
            self.stdout.write(self._describe(name, values, targets, verb="would register"))
            return
        with transaction.atomic():
            host, created = BenchmarkHost.objects.select_for_update().get_or_create(
                name=name, defaults={**values, "registered_at": timezone.now()}
            )
            if not created:
                for field, value in values.items():
                    setattr(host, field, value)
                host.registered_at = timezone.now()
                host.save()
            if targets is not None:
                host.targets.set(targets)
            reached = list(host.targets.order_by("name"))
        verb = "registered new" if created else "updated"
        self.stdout.write(self._describe(name, values, reached, verb=verb))
        self.stdout.write(f"start its worker here: {host.worker_command}")

    def _targets(self, names: list[str] | None) -> list[Target] | None:
        if names is None:
            return None
        wanted = list(dict.fromkeys(n.strip() for n in names if n.strip()))
        found = {t.name: t for t in Target.objects.filter(name__in=wanted)}
        unknown = [n for n in wanted if n not in found]
        if unknown:
            known = ", ".join(Target.objects.order_by("name").values_list("name", flat=True)) or "none yet"
            raise CommandError(
                f"no target named {', '.join(map(repr, unknown))}; nothing was changed (targets: {known})"
            )
        return [found[n] for n in wanted]

    @staticmethod
    def _describe(name: str, values: dict[str, Any], targets: list[Target] | None, *, verb: str) -> str:
        hardware = [
            f"{values['cpus']} CPUs" if values["cpus"] else "CPUs unknown",
            f"{values['ram_gb']} GB RAM" if values["ram_gb"] else "RAM unknown",
            values["cpu_model"] or "CPU model unknown",
            values["kernel"] or "kernel unknown",
            values["os"] or "OS unknown",
            values["storage"] or "storage unknown",
        ]
        reach = "unchanged" if targets is None else (", ".join(t.name for t in targets) or "none")
        return f"{verb} benchmark host {name}: {'; '.join(hardware)}\ntargets: {reach}"
