"""Saved comparisons ("reports") and user-defined group sets."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class GroupSetDefinition(models.Model):
    """A user-defined group set: ``{group: "re:<pattern>" | [test or label, …]}`` in display order."""

    name = models.CharField(max_length=100, unique=True)
    rules = models.JSONField(help_text='{"group": "re:pattern" or ["test", "test_range=100", …]}')
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Report(models.Model):
    """A saved comparison with a permalink; recomputed (through the cache key) when new runs arrive."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    base_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    runs = models.ManyToManyField("runs.Run", blank=True, related_name="reports", help_text="empty: the whole series")
    group_set = models.CharField(max_length=100, default="auto")
    dop = models.PositiveIntegerField(null=True, blank=True)
    red = models.FloatField(default=0.95)
    green = models.FloatField(default=1.05)
    include_warmups = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("reports:report", args=[self.slug])
