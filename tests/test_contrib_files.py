"""contrib/: the example configuration loads as documented, the systemd units verify."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitpub import config

CONTRIB = Path(__file__).resolve().parent.parent / "contrib"
UNITS = ("gitpub-run@.service", "gitpub-reconcile@.service", "gitpub-reconcile@.timer")

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
        shutil.copyfile(CONTRIB / "systemd" / name, units / name)
    proc = subprocess.run(
        ["systemd-analyze", "verify", *scope, "--man=no", *UNITS],
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
