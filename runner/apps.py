from __future__ import annotations

from django.apps import AppConfig


class RunnerConfig(AppConfig):
    name = "runner"
    verbose_name = "Triggered benchmark runs"

    def ready(self) -> None:
        import functools

        from celery.signals import worker_ready, worker_shutdown

        from runner import confirm, experiments, receivers, tasks
        from runs import confirmations
        from runs import experiments as settings_experiments

        # Stories a benchmark host's run opened are measured again there before anyone is told.
        confirmations.register(functools.partial(confirm.hold, enqueue=tasks.enqueue), confirm.notes)
        # Story and run-diff pages offer "settings or code?" and show its split.
        settings_experiments.register(experiments.split_for)

        # weak=False: the functions live as long as the module; a worker's heartbeats start when it is ready.
        worker_ready.connect(receivers.worker_ready, weak=False, dispatch_uid="runner.worker_ready")
        worker_shutdown.connect(receivers.worker_shutdown, weak=False, dispatch_uid="runner.worker_shutdown")
