"""A benchmark host's hardware facts, read from the machine itself (``manage.py register_host`` runs there):
cores, memory, CPU model, kernel, operating system and disks.

Linux first (/proc, /sys, /etc/os-release); elsewhere what the standard library knows, and a fact that cannot
be read is left empty rather than guessed.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

# Block devices that are no disk of the machine's: loop files, RAM disks, compressed swap, device-mapper layers.
VIRTUAL_BLOCK = re.compile(r"^(loop|ram|zram|dm-|md|sr|fd|nbd)")


@dataclass(frozen=True)
class HostFacts:
    cpus: int | None
    ram_gb: int | None
    cpu_model: str
    kernel: str
    os: str
    storage: str


def cpu_model(cpuinfo: str) -> str:
    """The CPU's name from /proc/cpuinfo: x86's "model name", else what ARM and POWER call it."""
    for key in ("model name", "Model", "cpu model", "cpu"):
        match = re.search(rf"^{re.escape(key)}\s*:\s*(.+?)\s*$", cpuinfo, re.MULTILINE)
        if match:
            return re.sub(r"\s+", " ", match.group(1))[:200]
    # 64-bit ARM names no model: its implementer and part numbers identify the core (0x41 0xd0c: Neoverse N1).
    implementer = re.search(r"^CPU implementer\s*:\s*(\S+)", cpuinfo, re.MULTILINE)
    part = re.search(r"^CPU part\s*:\s*(\S+)", cpuinfo, re.MULTILINE)
    if implementer and part:
        return f"ARM implementer {implementer.group(1)} part {part.group(1)}"
    return ""


def ram_gb(meminfo: str) -> int | None:
    """MemTotal of /proc/meminfo in GB, rounded to the nearest (the kernel keeps a little for itself)."""
    match = re.search(r"^MemTotal:\s*(\d+)\s*kB", meminfo, re.MULTILINE)
    if not match:
        return None
    return max(1, round(int(match.group(1)) * 1024 / 2**30))


def os_name(os_release: str) -> str:
    """PRETTY_NAME of /etc/os-release, unquoted."""
    match = re.search(r"^PRETTY_NAME=(.*)$", os_release, re.MULTILINE)
    return match.group(1).strip().strip("\"'")[:200] if match else ""


def disks(sys_block: Path) -> str:
    """The machine's disks from /sys/block, each its name, size, model (when known) and kind: "nvme0n1 1.0 TB
    Samsung SSD 980 non-rotational, sda 4.0 TB rotational"."""
    found = []
    for device in sorted(sys_block.iterdir()) if sys_block.is_dir() else []:
        if VIRTUAL_BLOCK.match(device.name):
            continue
        sectors = _read(device / "size")
        if not sectors.isdigit() or int(sectors) == 0:
            continue
        size = int(sectors) * 512
        words = [device.name, _size(size)]
        model = _read(device / "device" / "model")
        if model:
            words.append(model)
        rotational = _read(device / "queue" / "rotational")
        if rotational in ("0", "1"):
            words.append("rotational" if rotational == "1" else "non-rotational")
        found.append(" ".join(words))
    return ", ".join(found)[:200]


def _size(size: int) -> str:
    tb = size / 1e12
    return f"{tb:.1f} TB" if tb >= 1 else f"{size / 1e9:.0f} GB"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""


def _physical_ram_gb() -> int | None:
    try:
        return max(1, round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30))
    except (AttributeError, ValueError, OSError):
        return None


def collect() -> HostFacts:
    """The facts of the machine this runs on."""
    return HostFacts(
        cpus=os.cpu_count(),
        ram_gb=ram_gb(_read(Path("/proc/meminfo"))) or _physical_ram_gb(),
        cpu_model=cpu_model(_read(Path("/proc/cpuinfo"))) or platform.processor()[:200],
        kernel=f"{platform.system()} {platform.release()}".strip()[:200],
        os=os_name(_read(Path("/etc/os-release"))) or platform.platform()[:200],
        storage=disks(Path("/sys/block")),
    )
