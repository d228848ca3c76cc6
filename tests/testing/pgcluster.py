"""A throwaway PostgreSQL cluster for the shared-store tests: initdb in a folder, Unix socket
only, durability off (a test database is thrown away, never recovered).

    python tests/testing/pgcluster.py start DIR   # prints a libpq URL; the server keeps running
    python tests/testing/pgcluster.py stop DIR
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

DATABASE = "gitpub"
SUPERUSER = "postgres"
# sun_path holds 108 bytes on Linux (104 on the BSDs); the server names its socket
# `.s.PGSQL.5432` inside the socket folder and will not start when the whole path is longer.
SOCKET_PATH_MAX = 103
SERVER_OPTIONS = (
    "-c listen_addresses='' -c fsync=off -c synchronous_commit=off"
    " -c full_page_writes=off -c max_connections=200"
)


class ClusterError(Exception):
    """The cluster could not be made, started or stopped; the message says which step and why."""


def _has_server(bindir: Path) -> bool:
    return all(os.access(bindir / name, os.X_OK) for name in ("initdb", "pg_ctl", "createdb"))


def find_bindir() -> Path | None:
    """The folder of initdb, pg_ctl and createdb, or None when PostgreSQL is not installed."""
    pg_config = shutil.which("pg_config")
    if pg_config:
        # Debian's pg_config comes with libpq-dev too, where the server may be absent.
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if out.returncode == 0 and _has_server(Path(out.stdout.strip())):
            return Path(out.stdout.strip())

    def major(path: str) -> int:
        version = Path(path).parent.name
        return int(version) if version.isdigit() else -1

    for found in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=major, reverse=True):
        if _has_server(Path(found)):
            return Path(found)
    initdb = shutil.which("initdb")
    if initdb and _has_server(Path(initdb).parent):
        return Path(initdb).parent
    return None


MISSING = (
    "no PostgreSQL server found (initdb, pg_ctl and createdb: not in `pg_config --bindir`, "
    "/usr/lib/postgresql/*/bin or PATH); install Debian's postgresql-15 or set GITPUB_TEST_PG"
)


def _as_owner(argv: list[str]) -> list[str]:
    """The server refuses to run as root, so root runs it as the `postgres` user."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", SUPERUSER, "--", *argv]
    return ["su", SUPERUSER, "-s", "/bin/sh", "-c", shlex.join(argv)]


def _run(argv: list[str], cwd: Path, what: str) -> None:
    # cwd is the cluster's folder: the `postgres` user may not enter the caller's folder.
    proc = subprocess.run(_as_owner(argv), cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ClusterError(f"{what} failed (exit {proc.returncode}): {' | '.join(said)}")


def url(base: Path) -> str:
    """The libpq URL of the cluster in `base`, its socket folder as the host."""
    return f"postgresql:///{DATABASE}?host={quote(str(base / 'sock'), safe='')}&user={SUPERUSER}"


def start(base: Path, bindir: Path) -> str:
    """Make a cluster in `base` (data/, sock/, log), start it, create the `gitpub` database,
    and return its URL."""
    base = base.resolve()
    sock = base / "sock"
    if len(str(sock / ".s.PGSQL.5432")) > SOCKET_PATH_MAX:
        raise ClusterError(f"{base}: too long a path for a Unix socket; choose a shorter folder")
    if (base / "data").exists():
        raise ClusterError(f"{base / 'data'}: a cluster is already there; stop it or pick another")
    sock.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        try:
            for path in (base, sock):
                shutil.chown(path, SUPERUSER, SUPERUSER)
        except LookupError as exc:
            raise ClusterError(
                f"running as root and no `{SUPERUSER}` user to run the server"
            ) from exc
    data, log = str(base / "data"), str(base / "log")
    _run(
        [str(bindir / "initdb"), "-D", data, "--auth=trust", "-U", SUPERUSER, "--no-sync"]
        + ["-E", "UTF8", "--locale=C"],
        base,
        "initdb",
    )
    options = f"-k {shlex.quote(str(sock))} {SERVER_OPTIONS}"
    _run(
        [str(bindir / "pg_ctl"), "start", "-w", "-D", data, "-l", log, "-o", options],
        base,
        "pg_ctl start",
    )
    try:
        _run(
            [str(bindir / "createdb"), "-h", str(sock), "-U", SUPERUSER, DATABASE], base, "createdb"
        )
    except ClusterError:
        stop(base, bindir)  # no server left running behind a failed start
        raise
    return url(base)


def stop(base: Path, bindir: Path) -> None:
    """Stop the cluster in `base`, if it runs; its files stay for the caller to remove."""
    data = base.resolve() / "data"
    if (data / "postmaster.pid").exists():
        _run(
            [str(bindir / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(data)],
            base,
            "pg_ctl stop",
        )


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: pgcluster.py start|stop DIR", file=sys.stderr)
        return 2
    bindir = find_bindir()
    if bindir is None:
        print(MISSING, file=sys.stderr)
        return 1
    try:
        if argv[0] == "start":
            print(start(Path(argv[1]), bindir))
        else:
            stop(Path(argv[1]), bindir)
    except ClusterError as exc:
        print(f"pgcluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
