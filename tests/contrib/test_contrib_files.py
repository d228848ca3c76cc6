"""contrib/: the example configuration loads as documented, the systemd units verify, and the
fleet's unit, image and entry point carry what docs/fleet.md says they do."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testing.paths import ROOT

from gitpub import config

CONTRIB = ROOT / "contrib"
UNITS = (
    "systemd/gitpub-run@.service",
    "systemd/gitpub-reconcile@.service",
    "systemd/gitpub-reconcile@.timer",
    "fleet/gitpub-worker@.service",
)
FLEET = CONTRIB / "fleet"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SPEC_KEYS = {
    "publish": {"remote", "branch", "content", "suffixes", "max_source_bytes"},
    "fonts": {"source", "face", "outputs", "always", "quality"},
    "steps": {"draft", "judge", "recheck", "review", "scan", "validate", "timeout"},
    "retry": {"max_attempts", "base_delay", "max_delay", "probe_interval"},
    "scan": {"allow"},
}


def test_example_config_has_every_spec_key() -> None:
    data = tomllib.loads((CONTRIB / "blogpub.example.toml").read_text())
    for table, keys in SPEC_KEYS.items():
        assert keys <= set(data[table]), f"[{table}] lacks {sorted(keys - set(data[table]))}"


def test_example_config_loads_and_shows_the_defaults(tmp_path: Path) -> None:
    shutil.copyfile(CONTRIB / "blogpub.example.toml", tmp_path / ".blogpub.toml")
    cfg = config.load(tmp_path)
    # The file says "the values shown are the defaults": hold it to that.
    assert cfg.publish == config.PublishConfig()
    assert cfg.fonts == config.FontsConfig()
    assert cfg.steps == config.StepsConfig()
    assert cfg.retry == config.RetryConfig()
    assert cfg.gc == config.GcConfig()
    assert cfg.scan == config.ScanConfig()


def _verify(tmp_path: Path, *scope: str, env: dict[str, str] | None = None) -> None:
    units = tmp_path / "units"
    units.mkdir(exist_ok=True)
    for name in UNITS:
        shutil.copyfile(CONTRIB / name, units / Path(name).name)
    proc = subprocess.run(
        ["systemd-analyze", "verify", *scope, "--man=no", *(Path(n).name for n in UNITS)],
        cwd=units,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
    # verify only warns about unknown keys or bad values; any word about our units is a defect.
    ours = [line for line in proc.stderr.splitlines() if "gitpub-" in line]
    assert proc.returncode == 0 and not ours, proc.stderr


needs_systemd = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here"
)
needs_git_path = pytest.mark.skipif(
    not os.access("/usr/bin/git", os.X_OK),
    reason="the units run /usr/bin/git, which this machine does not have",
)


@needs_systemd
@needs_git_path
def test_systemd_units_verify_as_system_units(tmp_path: Path) -> None:
    _verify(tmp_path)


@needs_systemd
@needs_git_path
def test_systemd_units_verify_as_user_units(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    _verify(tmp_path, "--user", env={"XDG_RUNTIME_DIR": str(runtime)})


def test_worker_unit_restarts_on_failure_and_timer_starts_reconcile() -> None:
    run = (CONTRIB / "systemd" / "gitpub-run@.service").read_text().splitlines()
    assert "Restart=on-failure" in run
    assert any(line.startswith("ExecStart=") and " run " in line for line in run)
    timer = (CONTRIB / "systemd" / "gitpub-reconcile@.timer").read_text().splitlines()
    assert "Unit=gitpub-reconcile@%i.service" in timer
    reconcile = (CONTRIB / "systemd" / "gitpub-reconcile@.service").read_text()
    assert "blogpub -C %f reconcile" in reconcile


# --------------------------------------------------------------------- contrib/fleet


def unit_keys(path: Path) -> dict[str, list[str]]:
    """A unit file's `Key=value` lines by key, in file order (Exec* keys repeat)."""
    keys: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            keys.setdefault(key, []).append(value)
    return keys


def test_fleet_unit_clones_afresh_restarts_always_and_spares_the_steps() -> None:
    unit = unit_keys(FLEET / "gitpub-worker@.service")
    assert unit["Restart"] == ["always"]
    assert unit["StartLimitIntervalSec"] == ["0"]  # an outage never retires a worker for good
    assert unit["StateDirectory"] == ["gitpub-worker"]
    # At every start: wait for the last worker's steps, remove its clone, clone afresh.
    wait, remove, clone = unit["ExecStartPre"]
    assert "/proc/[0-9]*/cwd" in wait and wait.endswith(" %S/gitpub-worker/%i")
    assert remove == "/bin/rm -rf %S/gitpub-worker/%i"
    assert " clone " in clone and clone.endswith(" %S/gitpub-worker/%i")
    (start,) = unit["ExecStart"]
    assert " -C %S/gitpub-worker/%i run --interval ${GITPUB_INTERVAL}" in start
    assert unit["EnvironmentFile"] == ["-%E/gitpub/worker.env", "-%E/gitpub/worker-%i.env"]
    # Steps run in sessions of their own and must outlive a worker restart: systemd signals
    # the main process only, and ExecStop ends the worker's own process group
    # (tests/contrib/test_contrib_fleet.py stops a worker mid-step with these lines).
    assert unit["KillMode"] == ["process"]
    assert unit["ExecStop"] == ["-/bin/kill -TERM -- -${MAINPID}"]


def test_worker_script_is_an_executable_posix_sh_script() -> None:
    script = FLEET / "worker.sh"
    assert script.read_text().startswith("#!/bin/sh\n")
    assert os.access(script, os.X_OK)  # COPY keeps the mode: the image runs it as it is
    proc = subprocess.run(["sh", "-n", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def containerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of contrib/fleet/Containerfile, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (FLEET / "Containerfile").read_text())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1]) for ln in lines]


def test_containerfile_installs_git_and_gitpub_postgresql_and_runs_worker_sh() -> None:
    steps = containerfile()
    (base,) = [args for op, args in steps if op == "FROM"]
    found = re.fullmatch(r"python:3\.(\d+)-slim-(bookworm|trixie)", base)
    assert found and int(found[1]) >= 10, base  # Debian's slim Python, at the project's floor
    runs = " && ".join(args for op, args in steps if op == "RUN")
    assert re.search(r"apt-get install [^&]*\bgit\b", runs), runs
    args = dict(a.split("=", 1) for op, a in steps if op == "ARG")
    assert args["GITPUB"] == '"git-blogpub[postgresql]"'
    assert re.search(r'pip install [^&]*"\$GITPUB"', runs), runs
    copies = [args.split() for op, args in steps if op == "COPY"]
    assert copies == [["worker.sh", "/usr/local/bin/gitpub-worker"]]
    assert all((FLEET / src).is_file() for src, _ in copies)  # the build context is contrib/fleet
    (entry,) = [json.loads(args) for op, args in steps if op == "ENTRYPOINT"]
    assert entry == ["/usr/local/bin/gitpub-worker"]
    users = [args for op, args in steps if op == "USER"]
    assert users and users[-1] not in ("root", "0")
