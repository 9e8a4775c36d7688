from __future__ import annotations

import logging
import os
from typing import Any

import redis
from celery import Celery, bootsteps
from kombu.transport import redis as kombu_redis

from benchdash.logs import configure_celery_logging
from benchdash.metrics import count_celery_tasks

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

log = logging.getLogger(__name__)


class _RedisChannel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        # When the broker connection is lost, Celery collects the connection, which detaches its transport,
        # and then still reaches its old channel: to close it (giving its unacknowledged messages back) and,
        # once a task running through the outage ends, to acknowledge it. kombu's channel then reads the
        # detached transport's settings and fails with an AttributeError ('NoneType' object has no attribute
        # 'hostname'), which is no connection error, so it went up as "Unrecoverable error" and the worker
        # exited. Said as what it is, the broker connection being gone, Celery ignores it on closing and logs
        # it on acknowledging; Redis gives the message back after the visibility timeout, and the
        # (idempotent) task finds its work done.
        if self.connection.client is None:
            raise redis.exceptions.ConnectionError("this channel's broker connection is closed")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)
        return params


class RedisBrokerTransport(kombu_redis.Transport):
    """kombu's Redis transport, whose channels outlive the loss of their connection (see ``_RedisChannel``)."""

    Channel = _RedisChannel


app = Celery("benchdash")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Worker and beat log through the site's LOGGING (time, level, logger, task id), not Celery's own format.
configure_celery_logging()
# Every task timed and counted by outcome for /metrics, in the process that runs it.
count_celery_tasks()
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
                "reports.tasks.refresh_lost_series",
                "regressions.tasks.resend_lost_alerts",
            ):
                parent.app.send_task(task, queue=parent.app.conf.task_default_queue)
        except Exception:
            log.warning("could not ask for the requeue of queued bundles; beat will", exc_info=True)


app.steps["consumer"].add(RequeueOnConnect)
