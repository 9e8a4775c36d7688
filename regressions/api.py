"""HTTP API for regressions and bugs (``regressions_router``): list, create, triage, link bugs, detect.

Reading is open like the pages; every change needs the triager role, through an
API token (``Authorization: Bearer``) or a logged-in session (CSRF-checked), and is
written to the triage log.
All changes go through ``regressions.triage`` and ``regressions.detection``, the same functions the pages
and the command use.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, Query, Router, Schema, Status
from pydantic import ConfigDict

from accounts.permissions import TRIAGE, api_auth
from benchdash.api_errors import ErrorOut, responses
from benchdash.querynumbers import QueryInt
from regressions import bugs as bugrefs
from regressions.filters import RegressionFilters
from regressions.models import Bug, Regression, TriageEvent
from regressions.settings_split import story_split
from regressions.tasks import detect_regressions_task
from regressions.triage import link_bug, triage, unlink_bug
from regressions.viewnote import view_note
from runs.models import Dbms, Microbenchmark, Server, Version, Workload

regressions_router = Router(tags=["regressions"])

State = Regression.State
# Choices as schema enums: a value outside them is refused as invalid input (422) before any query.
StateName = Literal["new", "acknowledged", "bug_filed", "fixed", "expected", "noise"]
StateFilter = Literal["open", "any", "new", "acknowledged", "bug_filed", "fixed", "expected", "noise"]
KindName = Literal["regression", "improvement"]
TabName = Literal["open", "improvements", "fixed", "outliers", "metrics", "all"]
ReleaseViewName = Literal["long-term", "all"]
MAX_LIMIT = 500
# Far beyond any real count of records, far below what the database's bigint offset can hold.
MAX_OFFSET = 10**9
# Ids are bigints: a larger number names no row, and the database driver cannot even send it.
RowId = Annotated[int, Field(ge=1, le=2**63 - 1)]


class BugOut(Schema):
    id: int
    tracker: str
    key: str
    label: str
    url: str
    title: str
    status: str
    fixed_in: str


class RegressionOut(Schema):
    id: int
    kind: str
    state: str
    subject: str
    microbenchmark: str | None
    group: str
    dbms: str
    server: str
    workload: str
    arrived_in: str
    arrived_in_build: str | None
    previous_version: str | None
    fixed_in: str | None
    persists_until: str | None
    provisional_release: str | None  # the newest release read only as the newest: provisional until a newer one
    level_before: float | None
    level_after: float | None
    change: float | None
    # The story: every change against the level before the arrival (previous_version).
    metric: str
    outlier: bool
    open: bool
    current_change: float | None
    worst_change: float | None
    folded_into: int | None
    story_events: list[dict[str, Any]]
    outliers: list[str]
    noise: float | None
    noise_source: str
    noise_rule: str
    builds: list[str]
    releases: str
    metric_steps: list[dict[str, Any]]
    summary: str
    # The figures above, labelled: the step at arrival, the level now, the base (``regressions.figures``).
    figures: dict[str, Any]
    # "fixed in 11.4.8, still open in 10.11.14": fixed in one maintained release line, open in another; or "".
    backport_gap: str
    no_longer_detected: bool
    bugs: list[BugOut]
    url: str


class EventOut(Schema):
    at: str
    user: str | None
    from_state: str
    to_state: str
    note: str


class RegressionDetailOut(RegressionOut):
    evidence: dict[str, Any]
    events: list[EventOut]
    # "Settings or code?" (runs.experiments.SettingsSplit.as_json): null when the story's two runs differ in no
    # server setting; else whether the new version can be re-run with the old version's settings, and once it
    # has been, total = from_defaults × from_code, per microbenchmark too, with σ and the settings (not) applied.
    settings_split: dict[str, Any] | None = None


class RegressionPage(Schema):
    count: int
    items: list[RegressionOut]
    # Which releases the view leaves out, in one line with the switch; the same per series as lists.
    releases_note: str
    left_out: list[str]
    provisional: list[str]  # newest releases read on a short-term line: provisional until a newer one arrives


class RegressionFilter(Schema):
    # open regression stories (default), improvements, fixed, outliers (QPS); metrics (HW metric stories), all
    tab: TabName = "open"
    releases: ReleaseViewName = "long-term"  # the release view the stories were detected over
    state: StateFilter | None = None  # open (the open tab's default), any (the others'), or one state
    kind: KindName | None = None
    metric: str | None = None  # qps, or the metric of a metric story: cpu/o, cs/o, rKB/o, wKB/o, w_amp, …
    dbms: str | None = None
    server: str | None = None
    workload: str | None = None
    group: str | None = None
    microbenchmark: str | None = None  # a label (point-query_range=100) or a test (point-query)
    q: str | None = None  # part of a microbenchmark's test or a group's name
    limit: QueryInt = Field(100, ge=1, le=MAX_LIMIT)
    offset: QueryInt = Field(0, ge=0, le=MAX_OFFSET)


class RegressionIn(Schema):
    server: str
    workload: str
    dbms: str
    arrived_in: str  # version text, e.g. 8.0.30
    kind: KindName = "regression"
    microbenchmark: str | None = None  # a label: point-query_range=100
    group: str = ""
    previous_version: str | None = None
    fixed_in: str | None = None
    level_before: float | None = None
    level_after: float | None = None
    state: StateName = "new"
    note: str = ""
    bugs: list[str] = []


class RegressionPatch(Schema):
    # Every field is optional, and ninja's schemas read attributes of any object (for model rows): without
    # this, a JSON list or number would pass as an empty patch, and a misspelt key would be ignored.
    model_config = ConfigDict(extra="forbid")

    state: StateName | None = None
    note: str = ""
    fixed_in: str | None = None  # a version text; "" clears it


class TriageIn(Schema):
    ids: list[RowId]
    state: StateName
    note: str = ""


class TriageOut(Schema):
    changed: int


class LinkIn(Schema):
    bug: str  # MDEV-33894, PS-8822, MySQL bug 102037, bug #102037, RocksDB #12038 or a URL
    title: str = ""
    carry: bool = False  # also link the same regression on other servers


class LinkOut(Schema):
    bug: BugOut
    linked: list[int]
    carried: list[int]


class DetectIn(Schema):
    server: str
    workload: str


class DetectOut(Schema):
    """Detection is queued, never awaited: its records appear at ``regressions`` once a worker has run it."""

    task_id: str
    server: str
    workload: str
    regressions: str


def _user(request: HttpRequest) -> Any:
    # Every endpoint that changes something has auth=api_auth(TRIAGE), which has put a logged-in user here.
    return request.user


def _regressions() -> QuerySet[Regression]:
    return Regression.objects.select_related(
        "server",
        "workload",
        "microbenchmark",
        "arrived_in__dbms",
        "arrived_in_build",
        "previous_version",
        "fixed_in",
        "base_run",
    ).prefetch_related("bugs")


def bug_out(bug: Bug) -> BugOut:
    return BugOut(
        id=bug.pk,
        tracker=bug.tracker,
        key=bug.key,
        label=bug.label,
        url=bug.url,
        title=bug.title,
        status=bug.status,
        fixed_in=bug.fixed_in,
    )


def _text(version: Version | None) -> str | None:
    return version.text if version else None


def regression_out(request: HttpRequest, r: Regression) -> dict[str, Any]:
    return {
        "id": r.pk,
        "kind": r.kind,
        "state": r.state,
        "subject": r.subject,
        "microbenchmark": r.microbenchmark.label if r.microbenchmark else None,
        "group": r.group,
        "dbms": r.arrived_in.dbms.name,
        "server": r.server.name,
        "workload": r.workload.name,
        "arrived_in": r.arrived_in.text,
        "arrived_in_build": r.arrived_in_build.name if r.arrived_in_build else None,
        "previous_version": _text(r.previous_version),
        "fixed_in": _text(r.fixed_in),
        "persists_until": _text(r.persists_until),
        "provisional_release": r.provisional_release,
        "level_before": r.level_before,
        "level_after": r.level_after,
        "change": r.change,
        "metric": r.metric,
        "outlier": r.outlier,
        "open": r.is_open_story,
        "current_change": r.current_change,
        "worst_change": r.worst_change,
        "folded_into": r.folded_into_id,
        "story_events": r.story_events,
        "outliers": r.outliers,
        "noise": r.noise,
        "noise_source": r.noise_source,
        "noise_rule": r.noise_rule,
        "builds": r.builds,
        "releases": r.releases,
        "metric_steps": r.metric_steps,
        "summary": r.summary,
        "figures": r.figures.as_json(),
        "backport_gap": r.backport_gap,
        "no_longer_detected": r.no_longer_detected,
        "bugs": [bug_out(b) for b in r.bugs.all()],
        "url": request.build_absolute_uri(r.get_absolute_url()),
    }


def _detail(request: HttpRequest, pk: int) -> dict[str, Any]:
    r = get_object_or_404(_regressions().select_related("persists_until"), pk=pk)
    events = TriageEvent.objects.filter(regression=r).select_related("user")
    split = story_split(r)
    return {
        **regression_out(request, r),
        "settings_split": split.as_json() if split is not None else None,
        # The typed evidence the story page reads too; a record entered by hand has none.
        "evidence": r.evidence_record.as_json() if r.stored_evidence else {},
        "events": [
            {
                "at": e.at.isoformat(),
                "user": e.user.get_username() if e.user else None,
                "from_state": e.from_state,
                "to_state": e.to_state,
                "note": e.note,
            }
            for e in events
        ],
    }


@regressions_router.get("/regressions", response=responses({200: RegressionPage}))
def list_regressions(request: HttpRequest, filters: Query[RegressionFilter]) -> Any:
    """Regression stories by series and version; ``tab=open`` (the default) lists open regression stories (not
    fixed, not outliers, not folded into their group's story) in triage states other than fixed, expected and noise."""
    try:
        found = RegressionFilters.from_mapping(filters).apply(_regressions().select_related("persists_until"))
    except ValueError as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    items = [regression_out(request, r) for r in found[filters.offset : filters.offset + filters.limit]]
    note = view_note(filters.releases, dbms=filters.dbms or "", server=filters.server or "")
    return Status(
        200,
        {
            "count": found.count(),
            "items": items,
            "releases_note": note.line(),
            "left_out": list(note.left_out),
            "provisional": list(note.provisional),
        },
    )


@regressions_router.get(
    "/regressions/{int:regression_id}", response=responses({200: RegressionDetailOut}, not_found=True)
)
def get_regression(request: HttpRequest, regression_id: int) -> Any:
    """One regression with its evidence (values per version) and its triage log."""
    return _detail(request, regression_id)


def _version(dbms: Dbms, text: str | None) -> Version | None:
    if not text:
        return None
    version, _ = Version.objects.get_or_create(dbms=dbms, text=text)
    return version


def _microbenchmark(label: str) -> Microbenchmark | None:
    test, _, size = label.partition("_range=")
    found = Microbenchmark.objects.filter(test=test, range_size=int(size) if size.isdigit() else None)
    return found.first()


@regressions_router.post(
    "/regressions", auth=api_auth(TRIAGE), response=responses({201: RegressionDetailOut, 409: ErrorOut})
)
def create_regression(request: HttpRequest, payload: RegressionIn) -> Any:
    """Record a regression by hand (one known from a write-up or a bug report); detection may update its size later."""
    server = Server.objects.filter(name=payload.server).first()
    workloads = list(Workload.objects.filter(name=payload.workload)[:2])
    dbms = Dbms.objects.filter(name=payload.dbms).first()
    if server is None or len(workloads) != 1 or dbms is None:
        return Status(400, ErrorOut(detail="server, workload and dbms must name one existing row each"))
    if not payload.arrived_in.strip():
        return Status(400, ErrorOut(detail="arrived_in: the version the regression arrived in"))
    if payload.kind not in Regression.Kind.values or payload.state not in State.values:
        states = ", ".join(State.values)
        return Status(400, ErrorOut(detail=f"kind is regression or improvement; state one of {states}"))
    microbenchmark = _microbenchmark(payload.microbenchmark) if payload.microbenchmark else None
    if payload.microbenchmark and microbenchmark is None:
        return Status(400, ErrorOut(detail=f"no microbenchmark {payload.microbenchmark!r}"))
    if microbenchmark is None and not payload.group:
        return Status(400, ErrorOut(detail="a regression needs a microbenchmark or a group"))
    try:
        for text in payload.bugs:
            bugrefs.parse(text)
    except ValueError as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    change = None
    if payload.level_before and payload.level_after is not None:
        change = payload.level_after / payload.level_before - 1
    try:
        with transaction.atomic():
            regression = Regression.objects.create(
                server=server,
                workload=workloads[0],
                microbenchmark=microbenchmark,
                group=payload.group,
                kind=payload.kind,
                arrived_in=Version.objects.get_or_create(dbms=dbms, text=payload.arrived_in.strip())[0],
                previous_version=_version(dbms, payload.previous_version),
                fixed_in=_version(dbms, payload.fixed_in),
                level_before=payload.level_before,
                level_after=payload.level_after,
                change=change,
                state=State.NEW,
            )
    except IntegrityError:
        existing = Regression.objects.filter(server=server, workload=workloads[0], kind=payload.kind).filter(
            Q(microbenchmark=microbenchmark) if microbenchmark else Q(microbenchmark__isnull=True, group=payload.group),
            arrived_in__dbms=dbms,
            arrived_in__text=payload.arrived_in,
        )
        found = existing.values_list("pk", flat=True).first()
        return Status(409, ErrorOut(detail=f"that regression exists already: id {found}"))
    TriageEvent.objects.create(
        regression=regression, user=_user(request), from_state=State.NEW, to_state=State.NEW, note="entered by hand"
    )
    for text in payload.bugs:
        link_bug(regression, text, user=_user(request))
    if payload.state != State.NEW:
        triage([regression.pk], payload.state, _user(request), payload.note)
    return Status(201, _detail(request, regression.pk))


@regressions_router.patch(
    "/regressions/{int:regression_id}",
    auth=api_auth(TRIAGE),
    response=responses({200: RegressionDetailOut}, not_found=True),
)
def update_regression(request: HttpRequest, regression_id: int, payload: RegressionPatch) -> Any:
    """Change the state (logged with the note) or correct ``fixed_in``."""
    regression = get_object_or_404(Regression.objects.select_related("arrived_in__dbms", "fixed_in"), pk=regression_id)
    if payload.state is not None and payload.state not in State.values:
        return Status(400, ErrorOut(detail=f"state must be one of {', '.join(State.values)}"))
    with transaction.atomic():
        if payload.fixed_in is not None:
            before = _text(regression.fixed_in) or "–"
            regression.fixed_in = _version(regression.arrived_in.dbms, payload.fixed_in)
            regression.save(update_fields=["fixed_in", "updated_at"])
            TriageEvent.objects.create(
                regression=regression,
                user=_user(request),
                from_state=regression.state,
                to_state=regression.state,
                note=f"fixed in: {before} → {payload.fixed_in or '–'}" + (f"; {payload.note}" if payload.note else ""),
            )
        if payload.state is not None:
            triage([regression.pk], payload.state, _user(request), payload.note)
    return Status(200, _detail(request, regression.pk))


@regressions_router.post("/regressions/triage", auth=api_auth(TRIAGE), response=responses({200: TriageOut}))
def triage_regressions(request: HttpRequest, payload: TriageIn) -> Any:
    """Move many regressions to one state at once, one triage event each."""
    try:
        return Status(200, TriageOut(changed=triage(payload.ids, payload.state, _user(request), payload.note)))
    except ValueError as exc:
        return Status(400, ErrorOut(detail=str(exc)))


@regressions_router.post(
    "/regressions/{int:regression_id}/bugs", auth=api_auth(TRIAGE), response=responses({200: LinkOut}, not_found=True)
)
def link_regression_bug(request: HttpRequest, regression_id: int, payload: LinkIn) -> Any:
    """Link a bug by key or URL; ``carry`` links it to the same regression on other servers too."""
    regression = get_object_or_404(Regression, pk=regression_id)
    try:
        result = link_bug(regression, payload.bug, user=_user(request), title=payload.title, carry=payload.carry)
    except ValueError as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    return Status(200, LinkOut(bug=bug_out(result.bug), linked=result.linked, carried=result.carried))


@regressions_router.delete(
    "/regressions/{int:regression_id}/bugs/{int:bug_id}",
    auth=api_auth(TRIAGE),
    response=responses({204: None}, not_found=True),
)
def unlink_regression_bug(request: HttpRequest, regression_id: int, bug_id: int) -> Any:
    """Unlink a bug from a regression; 404 when either does not exist or the bug is not linked to it."""
    regression = get_object_or_404(Regression, pk=regression_id)
    bug = get_object_or_404(Bug, pk=bug_id)
    if not unlink_bug(regression, bug, user=_user(request)):
        return Status(404, ErrorOut(detail=f"{bug.label} is not linked to regression {regression_id}"))
    return Status(204, None)


@regressions_router.get("/bugs", response=responses({200: list[dict[str, Any]]}))
def list_bugs(request: HttpRequest) -> Any:
    """Every bug with the ids of the regressions it explains."""
    return [
        {**bug_out(bug).model_dump(), "regressions": [r.pk for r in bug.regressions.all()]}
        for bug in Bug.objects.prefetch_related("regressions")
    ]


@regressions_router.post("/regressions/detect", auth=api_auth(TRIAGE), response=responses({202: DetectOut}))
def detect(request: HttpRequest, payload: DetectIn) -> Any:
    """Queue change-point detection for a server + workload; 202 says what was queued.

    Task results are not kept (no result backend), so the answer never waits for the worker: the records it
    creates or updates appear at ``regressions`` (this series' records, every state) when it has run.
    """
    server = Server.objects.filter(name=payload.server).first()
    workload = Workload.objects.filter(name=payload.workload).first()
    if server is None or workload is None:
        return Status(400, ErrorOut(detail="server and workload must name existing rows"))
    queued = detect_regressions_task.delay(server.pk, workload.pk)
    listing = (
        reverse("api:list_regressions")
        + "?"
        + urlencode({"server": server.name, "workload": workload.name, "tab": "all"})
    )
    return Status(
        202,
        DetectOut(
            task_id=queued.id,
            server=server.name,
            workload=workload.name,
            regressions=request.build_absolute_uri(listing),
        ),
    )
