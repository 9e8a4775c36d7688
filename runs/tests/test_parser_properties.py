"""Property tests (hypothesis) for every parser: any input gives a result or the parser's documented error.

The documented errors are what the importer catches and shows the user
(runs.importer.import_bundle): sysbench.ParseError, ManifestError,
dbbench.ParseError, BundleError; naming raises ValueError, versions VersionError.
Anything else escaping a parser would be a crash in an upload. Structured
strategies build near-valid files (a real sysbench layout with hostile numbers
in it), so the examples reach the code past the first sanity check.
"""

from __future__ import annotations

import math
import string
import tarfile
from typing import Any

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from runs import versions
from runs.bundle import BundleError
from runs.manifest import ManifestError, parse_manifest
from runs.tests import hostile
from suites import naming
from suites.dbbench import parse as dbbench
from suites.sysbench import parse as sysbench

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Numbers as a file might hold them: plain, with exponents, signs, NaN and infinities in sysbench's and
# printf's spellings, several dots, huge, empty, or not numbers at all.
number_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=0, max_value=1e12).map(lambda x: f"{x:.2f}"),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["nan", "-nan", "NaN", "inf", "-inf", "Infinity", "1.2.3", ".", "-", "", "1e999", "0x10", "٣"]),
    st.text(alphabet=string.printable, min_size=1, max_size=8).filter(lambda t: not any(c.isspace() for c in t)),
)
# Any text, including NUL, control characters, surrogate-free unicode and very long lines.
any_text = st.text(max_size=2000)


def _finite_non_negative(*values: float | None) -> bool:
    return all(v is None or (math.isfinite(v) and v >= 0) for v in values)


# --------------------------------------------------------------------------- sysbench


def _check_output(out: sysbench.SysbenchOutput) -> None:
    assert _finite_non_negative(
        out.qps,
        out.queries_per_s,
        out.tps,
        out.errors_per_s,
        out.reconnects_per_s,
        out.elapsed_s,
        out.lat_min_ms,
        out.lat_avg_ms,
        out.lat_max_ms,
        out.lat_pct_ms,
        out.lat_pct,
        out.lat_sum_ms,
    )
    for count in (out.queries, out.transactions, out.errors, out.reconnects, out.events):
        assert count is None or 0 <= count <= sysbench.MAX_COUNT
    for small in (out.threads, out.cpus):
        assert small is None or 0 <= small <= sysbench.MAX_SMALL
    assert len(out.sysbench_version) <= 64


@FUZZ
@given(text=any_text, test=st.sampled_from(["point-query", "scan", "scan.warmpre", "read-only.pre", ""]))
def test_parse_output_returns_finite_measurements_or_a_parse_error_for_any_text(text: str, test: str) -> None:
    try:
        out = sysbench.parse_output(text, test=test)
    except sysbench.ParseError:
        return
    _check_output(out)


@FUZZ
@given(
    qps=number_text,
    tps=number_text,
    avg=number_text,
    table_size=number_text,
    threads=number_text,
    test=st.sampled_from(["point-query", "scan", "update-index"]),
)
@example(qps="nan", tps="1", avg="1", table_size="1", threads="1", test="point-query")
@example(qps="1", tps="1", avg="0.000001", table_size="1" + "0" * 320, threads="1", test="scan")
def test_parse_output_refuses_every_non_measurement_in_a_real_layout(
    qps: str, tps: str, avg: str, table_size: str, threads: str, test: str
) -> None:
    text = hostile.SB_O.format(qps=qps, tps=tps, avg=avg)
    text = text.replace("--table-size=10000000", f"--table-size={table_size}", 1)
    text = text.replace("Number of threads: 1", f"Number of threads: {threads}", 1)
    try:
        out = sysbench.parse_output(text, test=test, file_name="sb.o.fuzz")
    except sysbench.ParseError as exc:
        error = str(exc)
    else:
        _check_output(out)
        assert out.queries_per_s == float(qps)  # what was accepted is what the file says, never a default
        return
    assert error.startswith("sb.o.fuzz: ")  # the message names the file


@FUZZ
@given(text=any_text)
def test_parse_met_returns_finite_non_negative_metrics_or_a_parse_error(text: str) -> None:
    try:
        metrics = sysbench.parse_met(text)
    except sysbench.ParseError:
        return
    assert set(metrics) <= set(sysbench.MET_FIELDS.values()) and _finite_non_negative(*metrics.values())


@FUZZ
@given(values=st.lists(number_text, min_size=1, max_size=12))
def test_parse_met_refuses_each_bad_value_in_the_real_layout(values: list[str]) -> None:
    header = "samp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s"
    row = "\t".join(["904", *(values + ["1"] * 8)[:8]])
    try:
        metrics = sysbench.parse_met(f"iostat\n{header}\n{row}\n", file_name="sb.met.fuzz")
    except sysbench.ParseError as exc:
        error = str(exc)
    else:
        assert len(metrics) == 8 and _finite_non_negative(*metrics.values())
        return
    assert error.startswith("sb.met.fuzz: ")


@FUZZ
@given(text=any_text)
@example("nan\tInnoDB point-query range=100")
def test_parse_summary_returns_finite_non_negative_values_or_a_parse_error(text: str) -> None:
    try:
        values = sysbench.parse_summary(text)
    except sysbench.ParseError:
        return
    assert values and _finite_non_negative(*values)


@FUZZ
@given(text=any_text, secs=number_text, ips=number_text)
def test_parse_prepare_returns_a_finite_load_none_or_a_parse_error(text: str, secs: str, ips: str) -> None:
    for candidate in (text, f"{text}\nLoad seconds is {secs} for 8 tables, 1.0 Mips, {ips} ips\n"):
        try:
            load = sysbench.parse_prepare(candidate)
        except sysbench.ParseError:
            continue
        assert load is None or _finite_non_negative(load.seconds, load.inserts_per_s)


@FUZZ
@given(
    name=st.one_of(
        any_text,
        st.builds(
            "sb.{}.{}.range{}.pk{}{}".format,
            st.sampled_from(["o", "met", "prepare.o", "r.qps", "r.rt95", "x"]),
            st.text(min_size=1, max_size=30),
            st.integers(min_value=0, max_value=10**15),
            st.sampled_from(["0", "1", "2"]),
            st.one_of(st.just(""), st.integers(min_value=0, max_value=10**15).map(".dop{}".format)),
        ),
    )
)
def test_parse_file_name_gives_storable_parts_none_or_a_parse_error(name: str) -> None:
    try:
        parsed = sysbench.parse_file_name(name)
    except sysbench.ParseError:
        return
    if parsed is not None:
        assert 0 <= parsed.range_size <= sysbench.MAX_SMALL and parsed.pk in (0, 1)
        assert parsed.dop is None or 0 <= parsed.dop <= sysbench.MAX_SMALL


@FUZZ
@given(line=any_text)
def test_parse_command_never_raises_and_redaction_hides_every_password(line: str) -> None:
    options = sysbench.parse_command(line)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in options.items())
    redacted = sysbench.redact_command(f"{line} --mysql-password=Sup3r-secret {line}")
    assert "Sup3r-secret" not in redacted


# --------------------------------------------------------------------------- run directory names and versions

dbms_code = st.sampled_from(sorted(naming.DBMS_CODES))
token = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=1, max_size=20)


@FUZZ
@given(name=any_text)
def test_parse_run_dir_gives_a_run_name_or_a_value_error(name: str) -> None:
    try:
        parsed = naming.parse_run_dir(name)
    except ValueError:
        return
    assert parsed.name == name and parsed.pk in (0, 1) and parsed.dbms
    assert len(parsed.version) <= naming.MAX_VERSION and len(parsed.build) <= naming.MAX_BUILD


@FUZZ
@given(
    code=dbms_code,
    digits=st.integers(min_value=1, max_value=10**8),
    flavour=token,
    config=token,
    pk=st.sampled_from([0, 1]),
)
def test_a_generated_run_dir_name_parses_back_to_its_parts(
    code: str, digits: int, flavour: str, config: str, pk: int
) -> None:
    assume(not flavour[0].isdigit())
    build = f"{code}{digits}_{flavour}"
    name = f"x.{build}.{config}.pk{pk}"
    parsed = naming.parse_run_dir(name)
    assert (parsed.build, parsed.config, parsed.pk, parsed.dbms) == (build, config, pk, naming.DBMS_CODES[code])
    assert parsed.flavour == flavour.lstrip("_") and parsed.warnings == ()
    versions.sort_key(parsed.version)  # every version the names give can be ordered


@FUZZ
@given(text=any_text)
def test_parse_version_gives_a_version_or_a_version_error_and_sort_key_never_fails(text: str) -> None:
    try:
        parsed = versions.parse_version(text)
    except versions.VersionError:
        pass
    else:
        assert 1 <= len(parsed.release) <= 4
    assert isinstance(versions.sort_key(text), str)


release = st.lists(st.integers(min_value=0, max_value=999_999), min_size=1, max_size=4)
stage = st.one_of(st.just(""), st.builds("{}{}".format, st.sampled_from(["alpha", "beta", "rc"]), st.integers(0, 99)))


@FUZZ
@given(a=release, a_stage=stage, b=release, b_stage=stage)
def test_sort_key_orders_versions_as_their_numbers_do(a: list[int], a_stage: str, b: list[int], b_stage: str) -> None:
    def text(parts: list[int], stage_text: str) -> str:
        return ".".join(map(str, parts)) + stage_text

    def key(parts: list[int], stage_text: str) -> tuple[Any, ...]:
        parsed = versions.parse_version(text(parts, stage_text))
        return (*(parts + [0] * 4)[:4], parsed.stage, parsed.stage_no)

    left, right = versions.sort_key(text(a, a_stage)), versions.sort_key(text(b, b_stage))
    assert (left < right) == (key(a, a_stage) < key(b, b_stage))
    assert (left == right) == (key(a, a_stage) == key(b, b_stage))


# --------------------------------------------------------------------------- manifests


toml_value = st.one_of(
    st.text(max_size=300).map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.sampled_from(["true", "nan", "inf", "[1, 2]", "{ a = 1 }", "1979-05-27"]),
)
manifest_key = st.sampled_from(
    ["server", "workload", "dbms", "version", "build", "flavour", "config", "notes", "colour", "server_info.cpus"]
)


@FUZZ
@given(content=st.one_of(st.binary(max_size=500), st.lists(st.tuples(manifest_key, toml_value), max_size=6)))
def test_parse_manifest_gives_a_manifest_or_a_manifest_error(content: bytes | list[tuple[str, str]]) -> None:
    if isinstance(content, list):
        content = "\n".join(f"{key} = {value}" for key, value in content).encode("utf-8", "surrogatepass")
    try:
        manifest = parse_manifest(content)
    except ManifestError:
        return
    for value in manifest.model_dump(include={"server", "workload", "build", "config"}).values():
        assert value is None or len(value) <= 200


# --------------------------------------------------------------------------- db_bench


dbbench_cell = st.one_of(
    number_text, st.sampled_from(["", "NA", "fillseq.wal_disabled.v400", "readrandom.t4", "8.9.0"])
)


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=2000),
        st.lists(st.lists(dbbench_cell, min_size=1, max_size=6), max_size=6).map(
            lambda rows: (
                "ops_sec\tmb_sec\tlsm_sz\tblob_sz\tc_wgb\tw_amp\tc_mbps\tc_wsecs\tc_csecs\tb_rgb\tb_wgb\tusec_op\tp50\t"
                "p99\tp99.9\tp99.99\tpmax\tuptime\tstall%\tNstall\tu_cpu\ts_cpu\trss\ttest\tdate\tversion\tjob_id\t"
                "githash\n" + "\n".join("\t".join(row) for row in rows)
            ).encode()
        ),
    ),
    path=st.sampled_from(["sum.byrx.txt", "res.byrx/bm.lc.nt16/8.9.0/report.tsv", "x/y/sum2.txt.sdev"]),
)
def test_parse_dbbench_file_gives_runs_or_a_parse_error(data: bytes, path: str) -> None:
    try:
        runs, warnings = dbbench.parse_result_file(data, path=path, name=path)
    except dbbench.ParseError:
        return
    assert isinstance(warnings, list)
    for run in runs:
        for row in run.result_rows():
            assert row["qps"] is not None and math.isfinite(row["qps"])


# --------------------------------------------------------------------------- a whole bundle, parsed


sb_file_name = st.builds(
    "sb.{}.{}.range{}.pk1{}".format,
    st.sampled_from(["o", "met", "r.qps", "prepare.o"]),
    st.sampled_from(["point-query", "scan", "insert", "read-only.pre"]),
    st.integers(min_value=0, max_value=10**12),
    st.one_of(st.just(""), st.integers(min_value=0, max_value=10**12).map(".dop{}".format)),
)
file_content = st.one_of(
    st.binary(max_size=300),
    st.builds(hostile.sb_o, qps=number_text, tps=number_text, avg=number_text),
    st.builds(hostile.sb_met, rps=number_text, cpu_o=number_text),
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    files=st.dictionaries(sb_file_name, file_content, min_size=1, max_size=5),
    run=st.sampled_from([hostile.RUN, "x.zz9.c.pk0", "x.pg18beta1.cfg.pk1", "x." + "m" * 300 + ".c.pk1"]),
)
def test_parse_bundle_raises_only_the_errors_the_importer_reports(
    files: dict[str, bytes], run: str, settings: Any
) -> None:
    from runs.importer import parse_bundle

    data = hostile.tgz(hostile.member(f"{run}/{name}", content) for name, content in files.items())
    try:
        parsed = parse_bundle(data, name="fuzz.tgz")
    except (BundleError, ManifestError, sysbench.ParseError, dbbench.ParseError):
        return
    for parsed_run in parsed.runs:
        for row in parsed_run.results:
            assert math.isfinite(row["qps"]) and row["qps"] >= 0


def test_the_tar_writer_the_bundle_property_uses_keeps_names_as_given() -> None:
    # The property above builds archives with hostile.tgz; check it keeps a long name intact (pax), or the
    # property would silently test shorter names than it claims.
    name = "x." + "m" * 300 + ".c.pk1/sb.o.a"
    with tarfile.open(fileobj=__import__("io").BytesIO(hostile.tgz([hostile.member(name)]))) as tar:
        assert tar.getnames() == [name]
