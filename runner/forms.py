from __future__ import annotations

from typing import Any

from django import forms

from runner import hosts, network, sysbench_runner
from runner.models import BenchmarkHost, Schedule, Target
from runner.server_version import VersionError, ask_server_version, propose_build_label
from runs.models import Run
from suites.naming import parse_build

MAX_THREADS = 4096


def microbenchmark_choices() -> list[tuple[str, str]]:
    return [(m.label, f"{m.test} range={m.range_size}") for m in sysbench_runner.FULL]


class TargetForm(forms.ModelForm):
    # Write-only: PasswordInput(render_value=False) never puts it back in the page, not even after an error.
    password = forms.CharField(
        required=False,
        strip=False,
        max_length=256,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=(
            "Write-only: it is never shown again. When editing, leave blank to keep the stored one. "
            "It is only ever sent to the host, port, user and database it was entered with: "
            "change any of them and enter it again."
        ),
    )
    clear_password = forms.BooleanField(required=False, label="Remove the stored password")

    class Meta:
        model = Target
        fields = [
            "name",
            "kind",
            "host",
            "port",
            "user",
            "database",
            "build_label",
            "config_label",
            "server_name",
            "sample_host_metrics",
            "storage_devices",
            "settings_experiments",
        ]

    field_order = ["name", "kind", "host", "port", "user", "password", "clear_password", "database"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The password is not a Meta field, so validation never overwrites the stored one with a blank.
        self.stored_password = self.instance.password
        self.fields["build_label"].required = False
        self.fields["build_label"].help_text += " Leave blank and benchdash asks the server and proposes one."
        if self.instance.pk is None:
            del self.fields["clear_password"]
        self.proposed_from: str | None = None

    def clean_build_label(self) -> str:
        label: str = self.cleaned_data["build_label"]
        if label:
            _dbms, _version, _flavour, warnings = parse_build(label)
            if warnings:
                raise forms.ValidationError(
                    "Start with my, ma or pg and the version digits (my8406, ma101119, pg174), then a flavour."
                )
        return label

    def clean_host(self) -> str:
        return checked_host(self.cleaned_data["host"])

    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        if password and (problem := sysbench_runner.password_problem(password)) is not None:
            raise forms.ValidationError(f"sysbench cannot be given this password: it must have {problem}.")
        return password

    def password_to_use(self) -> str:
        """The typed password, else the stored one; clean() has made sure the stored one may go where the form
        points."""
        if self.cleaned_data.get("clear_password"):
            return ""
        return self.cleaned_data.get("password") or self.stored_password

    def connection(self) -> sysbench_runner.Connection:
        try:
            return _checked_connection(self.cleaned_data, self.password_to_use())
        except network.HostRefused as exc:
            raise forms.ValidationError({"host": str(exc)}) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        needed = ("kind", "host", "port", "user", "database")
        if not all(data.get(k) for k in needed) or self.errors:
            return data
        keeps_stored = self.stored_password and not data.get("password") and not data.get("clear_password")
        endpoint = (data["host"], data["port"], data["user"], data["database"])
        if keeps_stored and self.instance.stored_password_for(*endpoint) is None:
            # Never send the stored password to a host, port, user or database it was not entered for.
            self.add_error("password", REENTER_PASSWORD)
            return data
        if not data.get("build_label"):
            try:
                version = ask_server_version(self.connection())
                data["build_label"] = propose_build_label(data["kind"], version)
            except VersionError as exc:
                self.add_error("build_label", f"Enter it: {exc}")
            else:
                self.proposed_from = version
        return data

    def save(self, commit: bool = True) -> Target:
        if self.cleaned_data.get("clear_password"):
            self.instance.set_password("")
        elif self.cleaned_data.get("password"):
            self.instance.set_password(self.cleaned_data["password"])
        self.instance.build_label = self.cleaned_data["build_label"]
        return super().save(commit=commit)  # type: ignore[no-any-return]


class ProposeBuildForm(forms.Form):
    """The connection fields of the target form, to ask the server before saving.

    ``target`` (the one being edited) lends its stored password only when host, port, user and database are
    the ones that password was entered for."""

    kind = forms.ChoiceField(choices=Target.Kind.choices)
    host = forms.CharField(max_length=255)
    port = forms.IntegerField(min_value=1, max_value=65535)
    user = forms.CharField(max_length=128)
    password = forms.CharField(required=False, strip=False, max_length=256)
    database = forms.CharField(max_length=128)
    target = forms.ModelChoiceField(queryset=Target.objects.all(), required=False)

    def clean_host(self) -> str:
        return checked_host(self.cleaned_data["host"])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        target: Target | None = data.get("target")
        if self.errors or target is None or data.get("password"):
            return data
        stored = target.stored_password_for(data["host"], data["port"], data["user"], data["database"])
        if stored is None:
            raise forms.ValidationError(REENTER_PASSWORD)
        data["password"] = stored
        return data

    def connection(self) -> sysbench_runner.Connection:
        return _checked_connection(self.cleaned_data, self.cleaned_data["password"])


def _checked_connection(data: dict[str, Any], password: str) -> sysbench_runner.Connection:
    """The connection a form's fields name, to the address its host was checked to resolve to."""
    return network.checked_connection(
        kind=data["kind"],
        host=data["host"],
        port=data["port"],
        user=data["user"],
        database=data["database"],
        password=password,
    )


REENTER_PASSWORD = (
    "The stored password is only sent to the host, port, user and database it was entered with: "
    "you changed one of them, so enter the password again."
)


def checked_host(host: str) -> str:
    """The host as typed, once it and every address it resolves to are allowed for targets."""
    host = host.strip()
    try:
        network.check_host(host, 0)
    except network.HostRefused as exc:
        raise forms.ValidationError(str(exc)) from None
    return host


def parse_threads(text: str) -> list[int]:
    values: list[int] = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        try:
            n = int(part)
        except ValueError:
            raise forms.ValidationError(f"{part!r} is not a whole number") from None
        if not 1 <= n <= MAX_THREADS:
            raise forms.ValidationError(f"{n}: each concurrency must be between 1 and {MAX_THREADS}")
        if n not in values:
            values.append(n)
    if not values:
        raise forms.ValidationError("Give at least one concurrency, e.g. 1 or 1,4,8")
    return values


class ThreadsField(forms.CharField):
    def to_python(self, value: Any) -> Any:
        if isinstance(value, list):
            return value
        return parse_threads(super().to_python(value) or "")

    def prepare_value(self, value: Any) -> Any:
        return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else value


class BaseRunField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.name} · {obj.server.name} · {obj.workload.name}"


class RunParametersForm(forms.Form):
    microbenchmarks = forms.MultipleChoiceField(
        choices=microbenchmark_choices,
        widget=forms.CheckboxSelectMultiple,
        initial=list(sysbench_runner.QUICK),
        help_text="They run in the classic order (reads, then writes), whatever order they are ticked in.",
    )
    tables = forms.IntegerField(min_value=1, max_value=1000, initial=1)
    table_size = forms.IntegerField(
        label="Rows per table", min_value=1, max_value=sysbench_runner.MAX_TABLE_SIZE, initial=1_000_000
    )
    threads = ThreadsField(label="Threads", initial="1", help_text="Comma list: every test runs at each (1,4,8).")
    seconds = forms.IntegerField(label="Seconds per test", min_value=1, max_value=24 * 3600, initial=60)
    warmup_seconds = forms.IntegerField(label="Warm-up seconds", min_value=0, max_value=3600, initial=0)
    base_run = BaseRunField(
        queryset=Run.objects.none(),
        required=False,
        label="Compare against",
        help_text="Optional base run (same server, tables and rows); the new run's red flags against it are kept.",
    )

    def __init__(self, *args: Any, preset: str | None = None, server_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if preset in sysbench_runner.PRESETS:
            self.initial["microbenchmarks"] = list(sysbench_runner.PRESETS[preset])
        runs = Run.objects.select_related("server", "workload").order_by("server__name", "workload__name", "name")
        if server_name is not None:
            runs = runs.filter(server__name=server_name)
        else:
            runs = runs.filter(server__name__in=Target.objects.values("server_name"))
        field = self.fields["base_run"]
        assert isinstance(field, BaseRunField)
        field.queryset = runs

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        tables, rows = data.get("tables"), data.get("table_size")
        if tables and rows and tables * rows > sysbench_runner.MAX_TOTAL_ROWS:
            self.add_error(
                "table_size",
                f"{tables:,} tables × {rows:,} rows is over the {sysbench_runner.MAX_TOTAL_ROWS:,} rows "
                "a run may load.",
            )
        return data

    def check_base(self, data: dict[str, Any], server_name: str | None) -> None:
        """Relative QPS against a base means something only on the same server and workload."""
        base: Run | None = data.get("base_run")
        if base is None or data.get("tables") is None or data.get("table_size") is None:
            return
        if server_name is not None and base.server.name != server_name:
            self.add_error("base_run", f"{base.name} ran on {base.server.name}, not on {server_name}.")
        params = base.workload.params or {}
        if (params.get("tables"), params.get("table_size")) != (data["tables"], data["table_size"]):
            self.add_error(
                "base_run",
                f"{base.name} used {params.get('tables')} tables × {params.get('table_size')} rows; "
                f"this run would use {data['tables']} × {data['table_size']}, so the comparison would mean nothing.",
            )

    def parameter_fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "microbenchmarks": [m.label for m in sysbench_runner.in_run_order(data["microbenchmarks"])],
            "tables": data["tables"],
            "table_size": data["table_size"],
            "threads": data["threads"],
            "seconds": data["seconds"],
            "warmup_seconds": data["warmup_seconds"],
        }


class StartRunForm(RunParametersForm):
    host = forms.ModelChoiceField(
        queryset=BenchmarkHost.objects.none(),
        required=False,
        help_text="The benchmark host whose worker runs it (only hosts that reach this target)",
    )

    def __init__(self, *args: Any, target: Target, **kwargs: Any) -> None:
        super().__init__(*args, server_name=target.server_name, **kwargs)
        self.target = target
        reach = target.hosts.order_by("name")
        field = self.fields["host"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = reach
        if len(reach) <= 1:
            # One host or none: nothing to choose (choose_host takes the only one).
            del self.fields["host"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        self.check_base(data, self.target.server_name)
        try:
            hosts.choose_host(self.target, data.get("host"))
        except hosts.HostChoiceError as exc:
            self.add_error("host" if "host" in self.fields else None, str(exc))
        return data


class ScheduleForm(RunParametersForm):
    name = forms.CharField(max_length=100)
    target = forms.ModelChoiceField(queryset=Target.objects.all())
    hour = forms.IntegerField(min_value=0, max_value=23, initial=2, help_text="UTC")
    minute = forms.IntegerField(min_value=0, max_value=59, initial=0)
    enabled = forms.BooleanField(required=False, initial=True)

    field_order = ["name", "target", "hour", "minute", "enabled"]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if Schedule.objects.filter(name=name).exists():
            raise forms.ValidationError("A schedule with this name exists.")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        target: Target | None = data.get("target")
        self.check_base(data, target.server_name if target else None)
        return data
