"""The reports app's own signal, in a module that imports nothing of the project: the refresh sends it
(``reports.series``) and apps above listen (``regressions.receivers``) without importing the comparisons."""

from __future__ import annotations

import django.dispatch

# Sent after a series' comparisons and summaries are fresh, with server_id and workload_id, when it has
# runs, and ``comparisons``: the comparisons the refresh computed, by spec, so a receiver asking for the same
# one neither computes it again nor reads it back from the cache; and ``started_at``, when the refresh began (every
# bundle imported before then is in it). The regressions app listens and detects again, in the same task.
series_refreshed = django.dispatch.Signal()
