"""`git blogpub dry-run`: prepare a source in throwaway state; print target, manifest and diff."""

from __future__ import annotations

from pathlib import Path

from gitpub import config, intake
from gitpub.cli.commands.output import say
from gitpub.cli.commands.submit import read_assets, read_source
from gitpub.context import require_remote
from gitpub.core.states import State
from gitpub.git.repo import Repo
from gitpub.ops import dryrun

_MEANING = {
    State.READY_TO_COMMIT: "a submit would commit and publish this",
    State.REVIEW: "a submit would stop in REVIEW",
    State.SKIPPED: "a submit would be SKIPPED",
}


def main(path: Path, *, source: str, target: str | None, assets: tuple[str, ...] = ()) -> None:
    # No open_context: it would create the state dir and open the live store, and a dry run
    # must leave both exactly as they are (even absent).
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    require_remote(repo, cfg)  # as submit refuses it: nothing could ever be delivered
    text = read_source(cfg, source)
    # Checked and refused exactly as submit's door does: a secret nobody allowed, a path that
    # is not portable, an asset that leaves its folder are a submit's first answer.
    name = "<stdin>" if source == "-" else source
    files, labels = read_assets(assets, cfg.publish.max_asset_bytes)
    req = intake.check(
        cfg, repo.root, intake.Request("dry-run", text, target, None, (), files, name, labels)
    )
    with dryrun.scratch_context(repo, cfg) as ctx:
        report(dryrun.preview(ctx, req.text, req.target, dict(req.assets)))


def report(p: dryrun.Preview) -> None:
    why = f": {p.reason}" if p.reason else ""
    say(f"outcome:  {p.outcome.value} ({_MEANING.get(p.outcome, p.outcome.value)}){why}")
    if p.base_commit:
        say(f"base:     {p.base_commit}")
    if p.target:
        decision = f" ({p.decision})" if p.decision else ""
        say(f"target:   {p.target}{decision}")
    if p.warning:
        say(f"warning:  {p.warning}")
    for a in p.assets:
        say(f"asset:    {a.name} -> {a.path} ({a.there})")
    if p.outcome is not State.READY_TO_COMMIT:
        return
    say(f"manifest: {p.manifest_sha256}")
    for e in p.entries:
        say(f"  {e.path}  sha256 {e.sha256}  {e.size} bytes")
    say("diff:")
    for line in p.diff:
        say(line)
