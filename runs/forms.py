from __future__ import annotations

from typing import Any

from django import forms

from runs.manifest import ManifestError, check_upload_fields

# The upload's metadata that say where the build's code came from (the manifest's keys of the same names).
COMMIT_FIELDS = ("commit", "branch", "pull_request", "repository", "commit_time")


class UploadForm(forms.Form):
    bundle = forms.FileField(
        label="Result bundle",
        help_text=(
            ".tar, .tar.gz/.tgz, .tar.zst, .tar.bz2, .tar.xz or .zip holding x.<build>.<config>.pk<N> directories, "
            "the scripts' summary tables (qps.abs.<name>.tsv or .csv, o.met.<name>) or open-format result "
            "documents, or one document (.json or .result.csv) as it is"
        ),
    )
    server = forms.CharField(
        label="Server", required=False, max_length=200, help_text="Name of the server the runs used (optional)"
    )
    workload = forms.CharField(
        label="Workload label",
        required=False,
        max_length=200,
        help_text="Optional; derived from the commands (summary tables have none: name it)",
    )
    commit = forms.CharField(label="Commit", required=False, max_length=64, help_text="Optional: git commit id")
    branch = forms.CharField(label="Branch", required=False, max_length=200)
    pull_request = forms.IntegerField(label="Pull request", required=False, min_value=1, max_value=2**31 - 1)
    repository = forms.CharField(
        label="Repository", required=False, max_length=200, help_text="owner/name, or the repository's URL"
    )
    commit_time = forms.CharField(
        label="Commit time", required=False, max_length=40, help_text="ISO 8601, e.g. 2025-10-01T04:12:00Z"
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name in COMMIT_FIELDS:
            if name in cleaned and cleaned[name] not in (None, ""):
                try:
                    check_upload_fields({name: cleaned[name]})
                except ManifestError as exc:
                    self.add_error(name, str(exc).split(": ", 1)[-1])
        return cleaned

    def overrides(self) -> dict[str, Any]:
        """What the upload says of every run, over the bundle's manifest."""
        data = self.cleaned_data
        return {"server": data["server"], "workload": data["workload"], **{n: data.get(n) for n in COMMIT_FIELDS}}


class RunFilterForm(forms.Form):
    dbms = forms.CharField(required=False, label="DBMS")
    server = forms.CharField(required=False)
    q = forms.CharField(required=False, label="Search")
