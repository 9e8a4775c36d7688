"""The runner app's receivers: imported bundles of host runs, and a worker's start and stop (host heartbeats)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from runs.signals import bundle_imported

# The runner's modules are imported by the receivers that use them: these connect when Django starts, which every
# process does, and runner.benchmark brings the importer and the comparisons.


@receiver(bundle_imported, dispatch_uid="runner.host_run_imported")
def host_run_imported(bundle_id: int, **kwargs: Any) -> None:
    from runner import benchmark

    benchmark.bundle_imported(bundle_id)


def worker_ready(sender: Any = None, **kwargs: Any) -> None:
    """A worker consuming a host's queue beats for that host while it lives."""
    from runner import hosts

    queues = [queue.name for queue in getattr(getattr(sender, "task_consumer", None), "queues", [])]
    hosts.start_heartbeats(queues, str(getattr(sender, "hostname", "") or ""))


def worker_shutdown(**kwargs: Any) -> None:
    from runner import hosts

    hosts.stop_heartbeats()
