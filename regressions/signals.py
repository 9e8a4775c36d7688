"""Signals the regressions app sends.

``story_opened`` is sent once per detection run that created new open
regression stories (records that are regressions, not fixed, not outliers, not
folded into their group's story), with ``regression_ids`` (list[int]),
``server_id`` and ``workload_id``; re-detecting the same data sends nothing.
It is sent once the records are written; a caller holding an outer transaction
may still roll them back, so receivers that send mail or webhooks should wait
for ``transaction.on_commit``.

The receivers of other apps' signals are in ``regressions.receivers``.
"""

from __future__ import annotations

from django.dispatch import Signal

story_opened = Signal()
