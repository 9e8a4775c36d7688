"""``manage.py register_host``: a benchmark machine registers itself, with the hardware facts read from it (checked
here against the system's own tools), idempotently; a target name that does not exist changes nothing."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from runner import hostfacts
from runner.models import BenchmarkHost, Target

pytestmark = pytest.mark.django_db


def _target(name: str) -> Target:
    return Target.objects.create(
        name=name,
        kind="mariadb",
        host="127.0.0.1",
        port=3306,
        user="bench",
        database="bench",
        build_label="ma101119_rel",
        config_label="tiny",
        server_name="lab",
    )


def register(*args: str) -> str:
    out = io.StringIO()
    call_command("register_host", *args, stdout=out)
    return out.getvalue()


def _tool(*argv: str) -> str:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def test_a_machine_registers_itself_with_its_own_facts_and_again_updates_the_same_host(client: Client) -> None:
    a, b = _target("maria-a"), _target("maria-b")
    out = register("lab-box", "--targets", "maria-a", "maria-b", "--notes", "governor: performance")
    host = BenchmarkHost.objects.get(name="lab-box")
    assert "registered new benchmark host lab-box" in out and "targets: maria-a, maria-b" in out
    assert f"start its worker here: {host.worker_command}" in out
    assert list(host.targets.order_by("name")) == [a, b]

    # The facts are this machine's, as its own tools report them.
    assert host.cpus == int(_tool("getconf", "_NPROCESSORS_ONLN"))
    total = int(re.search(r"^Mem:\s+(\d+)", _tool("free", "-b"), re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert host.ram_gb == max(1, round(total / 2**30))
    assert host.kernel == _tool("uname", "-sr").strip()
    if shutil.which("lscpu"):
        model = re.search(r"^Model name:\s*(.+)$", _tool("lscpu"), re.MULTILINE)
        if model and "model name" in Path("/proc/cpuinfo").read_text():
            assert host.cpu_model == re.sub(r"\s+", " ", model.group(1).strip())
    assert host.cpu_model and host.os and host.notes == "governor: performance"
    assert host.registered_at is not None
    first = host.registered_at

    # Again, without --targets: the same host, its targets and notes kept, registered later.
    out = register("lab-box")
    assert "updated benchmark host lab-box" in out and "targets: maria-a, maria-b" in out
    assert BenchmarkHost.objects.count() == 1
    host.refresh_from_db()
    assert list(host.targets.order_by("name")) == [a, b] and host.notes == "governor: performance"
    assert host.registered_at is not None and host.registered_at > first

    # --targets replaces the list; --storage describes the disks instead of those found.
    register("lab-box", "--targets", "maria-b", "--storage", "2x NVMe RAID 0 (xfs)")
    host.refresh_from_db()
    assert list(host.targets.all()) == [b] and host.storage == "2x NVMe RAID 0 (xfs)"

    page = client.get(f"/benchmarks/hosts/{host.pk}/").content.decode()
    assert f"{host.cpus} CPUs" in page and host.cpu_model in page and host.kernel in page
    assert "2x NVMe RAID 0 (xfs)" in page and "by the machine itself" in page
    listing = client.get("/benchmarks/hosts/").content.decode()
    assert "manage.py register_host NAME" in listing and host.cpu_model in listing


def test_an_unknown_target_or_a_bad_name_changes_nothing() -> None:
    a = _target("maria-a")
    register("lab-box", "--targets", "maria-a")
    with pytest.raises(CommandError, match=r"no target named 'nope'; nothing was changed \(targets: maria-a\)"):
        register("lab-box", "--targets", "maria-a", "nope", "--notes", "changed")
    host = BenchmarkHost.objects.get()
    assert list(host.targets.all()) == [a] and host.notes == ""
    with pytest.raises(CommandError, match="no target named 'nope'"):
        register("other-box", "--targets", "nope")
    assert not BenchmarkHost.objects.filter(name="other-box").exists()
    with pytest.raises(CommandError, match="cannot be a host name: letters, digits, _ and - only"):
        register("lab box")
    # A dry run reads the facts and writes nothing.
    out = register("third-box", "--dry-run")
    assert out.startswith("would register benchmark host third-box: ") and "targets: unchanged" in out
    assert BenchmarkHost.objects.count() == 1


@pytest.mark.parametrize(
    ("cpuinfo", "model"),
    [
        (
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R)  Xeon(R) Gold 6230\n",
            "Intel(R) Xeon(R) Gold 6230",
        ),
        (
            "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n",
            "ARM implementer 0x41 part 0xd0c",
        ),
        ("processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n", "POWER9 (raw), altivec supported"),
        (
            "processor\t: 0\nBogoMIPS\t: 108.00\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n",
            "Raspberry Pi 4 Model B Rev 1.4",
        ),
        ("", ""),
    ],
)
def test_the_cpu_model_of_other_machines(cpuinfo: str, model: str) -> None:
    assert hostfacts.cpu_model(cpuinfo) == model


def test_memory_os_and_disks_as_other_machines_describe_them(tmp_path: Path) -> None:
    assert hostfacts.ram_gb("MemTotal:       65843124 kB\nMemFree: 1 kB\n") == 63
    assert hostfacts.ram_gb("nothing here") is None
    assert hostfacts.os_name('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n') == "Ubuntu 24.04.1 LTS"
    assert hostfacts.os_name("") == ""
    for name, sectors, model, rotational in [
        ("nvme0n1", 1953525168, "Samsung SSD 980 1TB", "0"),
        ("sda", 7814037168, "", "1"),
        ("loop0", 1000, "", "0"),  # a loop file, not a disk
        ("sr0", 0, "", "1"),  # an empty drive
    ]:
        device = tmp_path / name
        (device / "device").mkdir(parents=True)
        (device / "queue").mkdir()
        (device / "size").write_text(f"{sectors}\n")
        (device / "queue" / "rotational").write_text(rotational)
        if model:
            (device / "device" / "model").write_text(model + "   \n")
    assert hostfacts.disks(tmp_path) == "nvme0n1 1.0 TB Samsung SSD 980 1TB non-rotational, sda 4.0 TB rotational"
    assert hostfacts.disks(tmp_path / "missing") == ""
