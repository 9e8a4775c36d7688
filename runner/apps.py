from __future__ import annotations

from django.apps import AppConfig


class RunnerConfig(AppConfig):
    name = "runner"
    verbose_name = "Triggered benchmark runs"
