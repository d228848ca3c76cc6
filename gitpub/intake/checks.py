"""What the door refuses before anything is recorded, each refusal one line naming the
argument: a source that is not UTF-8 text, a path that is not a portable article path, an
asset name that leaves its article's folder, a name that holds a secret.

Names are text too: a target, an asset name, a topic or a key that holds a token is refused
here, so nothing raw is ever persisted or pushed (the store keeps only sanitized forms, and a
sanitized path would publish the job under another name than the one asked for)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from gitpub.config import Config
from gitpub.core.errors import InputError
from gitpub.scan import FINGERPRINT_CHARS, scan

NAME_MAX = 255
"""Bytes in one path component: the limit of every common filesystem. A job commit made in
memory could hold a longer one, and every checkout of the blog would then fail."""

_NOT_PORTABLE = re.compile(r'[\x00-\x1f\x7f:*?"<>|\\]')
"""Characters a Windows or macOS clone cannot check out in a name (or that git would take for
something else), and control characters, which no terminal prints honestly."""

_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def text_argument(value: str, what: str) -> str:
    """An argument as the command line gave it: valid UTF-8 (Python keeps undecodable bytes
    of argv as lone surrogates, which no file, database or git object can hold)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what}: not valid UTF-8") from None
    return value


def has_control(value: str) -> bool:
    return _CONTROL.search(value) is not None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def decode_source(data: bytes, name: str, limit: int) -> str:
    """Validate submitted source bytes; every rejection names the source and the problem."""
    if len(data) > limit:
        raise InputError(f"{name}: source is {len(data)} bytes, over the limit of {limit}")
    for mark, encoding in _BOMS:
        if data.startswith(mark):
            raise InputError(f"{name}: source is {encoding} (byte-order mark); save it as UTF-8")
    if b"\x00" in data:
        wide = data[1::2].count(0) > len(data) // 4 or data[0::2].count(0) > len(data) // 4
        what = "looks like UTF-16 without a byte-order mark" if wide else "contains NUL bytes"
        raise InputError(f"{name}: source {what}; save it as UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: source is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise InputError(f"{name}: source is empty")
    return text


def asset_too_big(label: str, limit: int) -> str:
    """The refusal of an asset over `publish.max_asset_bytes`, through any door."""
    return f"{label}: over the limit of {limit} bytes (publish.max_asset_bytes)"


def portable_name(segment: str) -> str | None:
    """Why one path segment is not portable, or None: a reserved Windows device name, a
    character one of the common filesystems refuses, a trailing space or dot, too long."""
    if _NOT_PORTABLE.search(segment):
        return "a character a Windows clone cannot check out (or a control character)"
    if segment != segment.rstrip(" ."):
        return "a trailing space or dot"
    if segment != segment.lstrip(" "):
        return "a leading space"
    from gitpub.site.paths import reserved_device  # only a target or an asset is a path

    if reserved_device(segment):
        return "a name Windows reserves for a device"
    if len(segment.encode("utf-8")) > NAME_MAX:
        return f"a name of {len(segment.encode('utf-8'))} bytes (filesystems stop at {NAME_MAX})"
    return None


def no_secret(value: str, what: str, allow: Iterable[str] = ()) -> str:
    """Refuse a name that holds what the scanner takes for a secret."""
    found = scan(value, allow=allow)
    if found:
        raise InputError(
            f"{what}: holds what looks like a secret ({found[0].kind}, fingerprint "
            f"{found[0].fingerprint}); nothing was recorded"
        )
    return value


def _shown(value: str) -> str:
    """A name as an error may print it: control characters escaped, never raw."""
    return value.encode("unicode_escape").decode("ascii") if _NOT_PORTABLE.search(value) else value


def check_target(cfg: Config, root: Path, target: str, origin: str = "--target") -> str:
    """A repository-relative article path inside one of the content folders, else InputError.

    `origin` names where the path came from (`--target`, the draft's path, the judge's
    target): a reason names only what someone actually gave."""
    shown = _shown(target)
    if "\\" in target:
        raise InputError(f"{origin} {shown}: a backslash is no folder separator here; use /")
    pure = PurePosixPath(target)
    if pure.is_absolute() or target.startswith("~"):
        raise InputError(f"{origin} {shown}: must be relative to the repository root")
    if ".." in pure.parts or not pure.parts:
        raise InputError(f"{origin} {shown}: must not leave the content folders")
    if any(part.lower() == ".git" for part in pure.parts):
        raise InputError(f"{origin} {shown}: a path inside .git is git's own, never an article")
    for part in target.split("/"):
        why = portable_name(part) if part else "an empty folder name"
        if why is not None:
            raise InputError(f"{origin} {shown[:120]}: {why}")
    no_secret(target, origin)
    text = pure.as_posix()
    folder = next((c for c in cfg.publish.content if text.startswith(c.rstrip("/") + "/")), None)
    if folder is None:
        raise InputError(
            f"{origin} {target}: not inside a content folder ({', '.join(cfg.publish.content)})"
        )
    if pure.suffix not in cfg.publish.suffixes:
        raise InputError(f"{origin} {target}: must end in one of {', '.join(cfg.publish.suffixes)}")
    # A symlinked folder on the way could point anywhere; the resolved path must stay put.
    real_root = root.resolve()
    real_folder = (real_root / folder).resolve()
    real_target = (real_root / text).resolve()
    if not real_target.is_relative_to(real_folder) or not real_folder.is_relative_to(real_root):
        raise InputError(
            f"{origin} {target}: resolves outside the content folder through a symlink"
        )
    return text


def check_asset_path(rel: str, what: str = "--asset") -> str:
    """Where an asset goes, relative to its article's folder: subfolders allowed
    (`images/a.png`), nothing that leaves the folder, every segment a portable plain name."""
    shown = _shown(rel)
    if not rel or "\\" in rel or rel.startswith("/"):
        raise InputError(f"{what} {shown!r}: must be a relative path with / between folders")
    for part in rel.split("/"):
        if part in ("", ".", "..") or part.startswith("."):
            raise InputError(f"{what} {shown!r}: {part!r} is no plain name")
        why = portable_name(part)
        if why is not None:
            raise InputError(f"{what} {shown!r}: {why}")
    no_secret(rel, what)
    return rel


def check_asset_set(names: Iterable[str], what: str = "--asset") -> None:
    """Assets that can all be files of one checkout: none where another needs a folder
    (`images` beside `images/a.png`: the job folder, and every clone, could hold only one),
    and no two that are one name, or one folder, up to case or Unicode normalization."""
    given = set(names)
    if not given:
        return  # most submits carry no asset: then nothing loads the Unicode tables
    import unicodedata

    folded: dict[str, str] = {}
    for name in sorted(given):
        parts = name.split("/")
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if i < len(parts) and prefix in given:
                shown = f"{what} {_shown(name)!r}"
                raise InputError(f"{what} {_shown(prefix)!r}: a file where {shown} needs a folder")
            key = unicodedata.normalize("NFC", prefix).casefold()
            other = folded.setdefault(key, prefix)
            if other != prefix:
                raise InputError(
                    f"{what} {_shown(name)!r}: {_shown(prefix)!r} and {_shown(other)!r} are one "
                    f"name up to {_differ(prefix, other)}"
                )


def _differ(a: str, b: str) -> str:
    import unicodedata

    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return "Unicode normalization (NFC and NFD)"
    return "case" if a.casefold() == b.casefold() else "case and Unicode normalization"


def check_allow(allow: Iterable[str]) -> tuple[str, ...]:
    """`--allow` values, each a fingerprint as `git blogpub scan` prints it."""
    out: list[str] = []
    for value in allow:
        value = value.strip().lower()
        if len(value) != FINGERPRINT_CHARS or value.strip("0123456789abcdef"):
            raise InputError(
                f"--allow {_shown(value)!r}: not a fingerprint ({FINGERPRINT_CHARS} hex digits, "
                "as `git blogpub scan` prints them)"
            )
        out.append(value)
    return tuple(sorted(set(out)))
