from __future__ import annotations

from django import forms


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


class RunFilterForm(forms.Form):
    dbms = forms.CharField(required=False, label="DBMS")
    server = forms.CharField(required=False)
    q = forms.CharField(required=False, label="Search")
