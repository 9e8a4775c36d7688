from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

log = logging.getLogger(__name__)

app = Celery("benchdash")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class RequeueOnConnect(bootsteps.StartStopStep):
    """Each time the worker's consumer (re)connects to the broker, queued bundles are sent again,
    series whose after-import refresh was lost are refreshed, and lost regression alerts are sent.

    An upload made while the broker was down is stored as queued but its task
    never reached a queue; without this it would wait for beat (if beat runs at
    all). The consumer's steps start again after every reconnection, so this
    runs at start-up and after each outage. It only sends a task: the selection
    is ``runs.tasks.requeue_bundles``'s, and a failure here (broker gone again,
    say) is logged, never fatal to the worker.
    """

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, parent: Any) -> None:
        try:
            for task in (
                "runs.tasks.requeue_bundles",
                "runs.tasks.refresh_lost_series",
                "regressions.tasks.resend_lost_alerts",
            ):
                parent.app.send_task(task, queue=parent.app.conf.task_default_queue)
        except Exception:
            log.warning("could not ask for the requeue of queued bundles; beat will", exc_info=True)


app.steps["consumer"].add(RequeueOnConnect)
