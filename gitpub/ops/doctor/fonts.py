"""doctor's checks of the [fonts] table, as the jobs will meet it: jobs build on the remote
branch, so the source font must be there (not only in this checkout); the face must exist
and hold CJK; the outputs must be writable where `fonts` and `rebase` rebuild them."""

from __future__ import annotations

import os
from pathlib import Path

from gitpub.config import CONFIG_NAME, Config, FontsConfig, faces
from gitpub.config.slices import CSS_NAME
from gitpub.git.repo import Repo
from gitpub.ops.doctor.report import OK, PROBLEM, Report
from gitpub.site.language import blog_language

CJK = range(0x4E00, 0xA000)  # CJK Unified Ideographs: what the subsets exist for


def check_fonts(report: Report, repo: Repo, cfg: Config) -> None:
    fc = cfg.fonts
    if fc is None:
        return
    from gitpub.fonts.source import FontError, load, resolve  # heavy: only for font repos

    found = _on_remote(report, repo, cfg, fc)
    try:
        path = resolve(fc, repo.root)
    except FontError as exc:
        if found:  # on the remote but not here: the jobs are fine, `fonts` here is not
            exc = FontError(f"{exc.message} of this checkout")
        hint = f"git pull {cfg.publish.remote} {cfg.publish.branch}, or fix fonts.source"
        report.add("fonts", PROBLEM, exc.message, hint if found else _add_hint(cfg, fc))
        path = None
    if path is not None:
        try:
            source = load(fc, repo.root)
        except FontError as exc:
            report.add("fonts", PROBLEM, exc.message, _face_hint(fc, path))
        else:
            cjk = sum(1 for cp in source.coverage if cp in CJK)
            if cjk == 0:
                report.add(
                    "fonts",
                    PROBLEM,
                    f"{CONFIG_NAME}: fonts.source {fc.source!r} face {fc.face} holds no CJK "
                    "ideographs (U+4E00–U+9FFF): every subset would miss the articles' hanzi",
                    _face_hint(fc, path),
                )
            else:
                family = _check_face_language(report, repo, fc, path)
                report.add(
                    "fonts",
                    OK,
                    f"{fc.source} face {fc.face}{family}: {len(source.coverage)} characters, "
                    f"{cjk} CJK ideographs",
                )
    _outputs_writable(report, repo.root, fc)


def _check_face_language(report: Report, repo: Repo, fc: FontsConfig, path: Path) -> str:
    """The face's family and the language it is drawn for, against the blog's language: a
    Chinese blog set in a collection's JP face shows Japanese glyph shapes. Returns the
    family for the ok line (" (Noto Sans CJK SC, zh-Hans)")."""
    names = faces.families(path)
    family = names[fc.face] if fc.face < len(names) else ""
    region = faces.region(family)
    drawn = faces.REGIONS.get(region or "")
    said = f" ({family}{', ' + drawn if drawn else ''})" if family else ""
    declared = blog_language(repo.root)
    if declared is None or not region:
        return said
    language, where = declared
    wanted = faces.wanted_region(language)
    if not wanted or region in wanted:
        return said
    better = faces.choose(path, language)
    fix = (
        f"set fonts.face = {better[0]} ({better[1]}) in {CONFIG_NAME}"
        if better
        else f"point fonts.source at a font drawn for {language}"
    )
    report.add(
        "fonts",
        PROBLEM,
        f"fonts.face {fc.face} of {path.name} is {family!r}, drawn for {drawn}, but the blog "
        f"is {language!r} ({where}): its characters would show another region's glyph shapes",
        fix,
    )
    return said


def _add_hint(cfg: Config, fc: FontsConfig) -> str:
    pub = cfg.publish
    return (
        f"git add {fc.source} && git commit && git push {pub.remote} {pub.branch}, "
        "or fix fonts.source"
    )


def _face_hint(fc: FontsConfig, path: Path) -> str:
    return (
        f"set fonts.face to the index of a CJK face of {path.name} "
        f"(fc-query {path} lists them), or point fonts.source at a CJK font"
    )


def _on_remote(report: Report, repo: Repo, cfg: Config, fc: FontsConfig) -> bool:
    """True when the remote branch jobs build on holds the source (or it lies outside)."""
    pub = cfg.publish
    if Path(fc.source).expanduser().is_absolute():
        return True  # read from this node's disk: the checkout check below covers it
    ref = repo.tracking_ref(pub.remote, pub.branch)
    tip = repo.resolve(ref)
    if tip is None:
        return False  # the config check already says to fetch
    if repo.blob_at(tip, fc.source) is not None:
        return True
    short = ref.removeprefix("refs/remotes/")
    local = repo.resolve(f"refs/heads/{pub.branch}")
    committed = local is not None and repo.blob_at(local, fc.source) is not None
    if committed:
        hint = f"push it: git push {pub.remote} {pub.branch}"
    elif (repo.root / fc.source).is_file():
        hint = f"commit it and push it: {_add_hint(cfg, fc)}"
    else:
        hint = _add_hint(cfg, fc)
    report.add(
        "fonts",
        PROBLEM,
        f"fonts.source {fc.source!r} is not on {short}, the branch jobs build on: "
        "every job would stop in REVIEW",
        hint,
    )
    return False


def _outputs_writable(report: Report, root: Path, fc: FontsConfig) -> None:
    bad: list[str] = []
    # A chunked font writes its stylesheet and chunks into one folder: the stylesheet's
    # place answers for all of them.
    outputs = fc.outputs if fc.chunked is None else (f"{fc.chunked}/{CSS_NAME}",)
    for output in outputs:
        target = root / output
        if target.exists():
            if target.is_dir() or not os.access(target, os.W_OK):
                bad.append(output)
            continue
        parent = target.parent
        while not parent.exists() and parent != root:
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            bad.append(output)
    if bad:
        report.add(
            "fonts",
            PROBLEM,
            f"font outputs not writable in {root}: {', '.join(bad)}",
            "give the user that runs gitpub write access to them (chmod u+w / chown), "
            "or fix fonts.outputs"
            if fc.chunked is None
            else "or fix fonts.chunked",
        )
