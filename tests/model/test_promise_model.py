"""The standing guard of the whole promise: a random model over real git.

Its rules are what people and agents do to a blog gitpub writes into: an agent submits
(plain, for review, scheduled, a revision of an article already out), a worker passes, a
worker dies at a named crash point, a person edits, renames or takes down a published post
(a deletion commit, a force-push) or edits an article in the checkout gitpub writes from
(committed or not), a reviewer squashes, merges, rebases, edits or deletes a review branch,
an operator retries. After every step the model checks what gitpub promises,
against the real bare remote:

- every job is in a named state;
- PUBLISHED ⇒ its remote commit is on the published branch and (unless withdrawn) its
  article is at the tip; a job's commits on the branch are one per publication;
- every job commit on the branch changes only its own article and the font outputs;
- an article a person took down never comes back unless a person retried its job;
- SKIPPED only for an exact duplicate or an abandon;
- after a worker's pass: nothing left in flight or waiting to retry (the remote never
  fails), a merged review PUBLISHED, a deleted one REVIEW (only a deleted one called
  rejected), a waiting one's branch holding its article, a person's edit of the writer's
  checkout on the branch or, when it conflicted, still theirs and counted in conflict;
- `git fsck --strict` is clean on the remote.

It is a seeded walk: each seed picks the next rule and its arguments from its own random
generator, so a failure names its seed and the steps that led there, and the same seed walks
the same way again (`GITPUB_MODEL_SEEDS=17 GITPUB_MODEL_STEPS=40`). Bounded by default
(`.ci/run` runs it under `-m soak`); docs/testing.md has the long run. A walk that found a
bug is kept below as a plain regression test, its seed and steps written out."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, make_blog
from testing.fontkit import tiny_blog

from gitpub.core.states import State

pytestmark = pytest.mark.soak

SEEDS = [int(x) for x in os.environ.get("GITPUB_MODEL_SEEDS", "1,2").split(",") if x]
STEPS = int(os.environ.get("GITPUB_MODEL_STEPS", "16"))
# Read at import, before the hermetic fixture clears every GITPUB_* variable.
VERBOSE = bool(os.environ.get("GITPUB_MODEL_VERBOSE"))

CRASHES = (
    "after_draft",
    "after_local_committed",
    "during_batch_stacking",
    "after_rebase_before_push",
    "after_push_before_db",
    "after_review_push_before_db",
    "after_review_merged_before_db",
    "after_published_before_cleanup",
)
FONT_OUTPUT = "public/fonts/blog.woff2"
WORDS = (
    "river",
    "bridge",
    "lantern",
    "harbor",
    "meadow",
    "orchard",
    "violin",
    "comet",
    "glacier",
    "canyon",
    "ember",
    "willow",
    "saffron",
    "cobalt",
    "thistle",
    "juniper",
    "marble",
    "falcon",
    "pebble",
    "quartz",
)


@dataclass
class Modelled:
    """What the model knows of one job: what it asked for and what people did to it."""

    key: str
    target: str
    text: str
    review: bool
    publications: int = 1  # commits of it the branch may hold: one per (re)publication
    taken_down: bool = False  # a person removed its article; gitpub must not bring it back
    gone: bool = False  # its publication left the branch: it must show withdrawn
    branch_text: str | None = None  # a reviewer's edit on its review branch
    merged: bool = False  # its review branch merged by a person
    deleted: bool = False  # its review branch deleted unmerged
    restored: bool = False  # its commit gone, its bytes put back by a person's merge


@dataclass
class World:
    blog: Blog
    person: Blog
    fonts: bool
    jobs: dict[str, Modelled] = field(default_factory=dict)
    serial: int = 0
    skew: float = 0.0
    hand_edits: list[str] = field(default_factory=list)  # the line each one added


def _git_ok(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


class PromiseModel:
    """One blog, one writer node, one person with a clone; see the module's docstring."""

    def __init__(self, base: Path, fonts: bool, nodes: int = 1) -> None:
        blog = tiny_blog(base) if fonts else make_blog(base, CONFIG)
        blog.ok("install")  # the writer's checkout is a person's too: their edits are delivered
        self.world = World(blog, blog.clone("person"), fonts)
        # On a shared store, more nodes: each its own clone, all of them the fleet's.
        self.nodes = [blog] + [blog.clone(f"node{i}") for i in range(1, nodes)]

    def node(self, rng: random.Random) -> Blog:
        return rng.choice(self.nodes)

    @property
    def w(self) -> World:
        return self.world

    def env(self, crash: str | None = None) -> dict[str, str]:
        env = {"GITPUB_CLOCK_SKEW": str(self.w.skew)} if self.w.skew else {}
        if crash is not None:
            env["GITPUB_CRASH_AT"] = crash
        return env

    def state(self, job_id: str) -> dict[str, object]:
        job: dict[str, object] = self.w.blog.job(job_id)["job"]
        return job

    def jobs_in(self, *states: State) -> list[str]:
        names = {s.value for s in states}
        return sorted(j for j in self.w.jobs if self.state(j)["state"] in names)

    # -------------------------------------------------------------------- agents

    def submit(self, rng: random.Random) -> str:
        review, revision, later = rng.random() < 0.4, rng.random() < 0.25, rng.random() < 0.15
        words = rng.sample(WORDS, rng.randint(4, 8))
        w = self.w
        w.serial += 1
        n = w.serial
        out = [j for j in w.jobs.values() if not j.taken_down]
        target = out[n % len(out)].target if revision and out else f"content/posts/m{n}.mdx"
        hanzi = "天气很好" if w.fonts and n % 2 else ""
        text = article(f"Post {n}", " ".join(words) + f" {hanzi} (number {n}).")
        extra = ["--target", target] + (["--review"] if review else [])
        if later:
            extra += ["--at", "+1h"]
        src = w.blog.root.parent / f"model-src-{n}.mdx"
        src.write_text(text, encoding="utf-8")
        res = self.node(rng).blogpub(
            "submit", "--key", f"k{n}", "--source", str(src), "--json", *extra, env=self.env()
        )
        assert res.returncode == 0, res
        job_id = str(res.json()["job_id"])
        w.jobs[job_id] = Modelled(f"k{n}", target, text, review)
        return f"submit {job_id[:8]} {target} review={review} at={later}"

    def time_passes(self, rng: random.Random) -> str:
        self.w.skew += 7200.0  # scheduled jobs (+1h) are due from now on
        return "two hours pass"

    def work(self, rng: random.Random) -> str:
        node = self.node(rng)
        res = node.blogpub("run", "--until-idle", env=self.env())
        assert res.returncode == 0, res
        assert "Traceback" not in res.stderr, res.stderr
        self.after_a_pass(writer=node is self.w.blog)
        return "a worker's pass"

    def fleet_works(self, rng: random.Random) -> str:
        """Every node's worker passes at the same time (a fleet), each racing the others for
        the jobs, the delivery lock and the remote."""
        if len(self.nodes) < 2:
            return ""  # not applicable: one node
        env = {**os.environ, **self.env()}
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gitpub", "-C", str(node.root), "run", "--until-idle"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for node in self.nodes
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0 and "Traceback" not in err, err
        self.after_a_pass()
        return f"{len(procs)} workers pass at once"

    def crash(self, rng: random.Random) -> str:
        point = rng.choice(CRASHES)
        res = self.node(rng).blogpub("run", "--until-idle", env=self.env(point))
        assert res.returncode in (0, 137), res
        assert "Traceback" not in res.stderr, res.stderr
        return f"a worker killed at {point} ({res.returncode})"

    def sigkill(self, rng: random.Random) -> str:
        """A worker killed at a random instant of its pass (git children and all)."""
        after = round(rng.uniform(0.05, 1.5), 2)
        root = self.node(rng).root
        argv = [sys.executable, "-m", "gitpub", "-C", str(root), "run", "--until-idle"]
        proc = subprocess.Popen(
            argv,
            env={**os.environ, **self.env()},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return f"a worker SIGKILLed {after} s into its pass ({proc.returncode})"

    def retry(self, rng: random.Random) -> str:
        candidates = self.jobs_in(State.REVIEW, State.CONFLICT, State.FAILED) + [
            j for j in self.jobs_in(State.PUBLISHED) if self.state(j)["withdrawn"]
        ]
        if not candidates:
            return ""  # not applicable now: the walk draws again
        job_id = rng.choice(candidates)
        was = self.state(job_id)
        res = self.w.blog.blogpub("retry", job_id, env=self.env())
        assert res.returncode == 0, res
        m = self.w.jobs[job_id]
        if was["state"] == "PUBLISHED":
            m.publications += 1  # published again, by a person's wish
            for other in self.w.jobs.values():
                if other.target == m.target:
                    # The person wants the article up again: once it is, a job revising it
                    # revises a published article (while it is still down, gitpub holds such
                    # a job back by its own rule, which the walk does not need to repeat).
                    other.taken_down = False
        m.taken_down = m.gone = m.merged = m.deleted = m.restored = False
        return f"retry {job_id[:8]} (was {was['state']})"

    # -------------------------------------------------------------------- people

    def _published_here(self) -> list[str]:
        tip = self.w.blog.remote_git("rev-parse", "main")
        return [
            j
            for j in self.jobs_in(State.PUBLISHED)
            if not self.w.jobs[j].taken_down
            and _git_ok(
                self.w.blog.remote, "cat-file", "-e", f"{tip}:{self.w.jobs[j].target}"
            ).returncode
            == 0
        ]

    def _person_fresh(self) -> Blog:
        p = self.w.person
        p.git("fetch", "--quiet", "origin")
        p.git("checkout", "--quiet", "-B", "main", "origin/main")
        p.git("reset", "--quiet", "--hard", "origin/main")
        return p

    def person_changes_a_post(self, rng: random.Random) -> str:
        how = rng.choice(["edit", "delete", "rename"])
        candidates = self._published_here()
        if not candidates:
            return ""  # not applicable now: the walk draws again
        job_id = rng.choice(candidates)
        m = self.w.jobs[job_id]
        p = self._person_fresh()
        if how == "edit":
            # A line of its own each time: an edit of a post edited before still changes it.
            self.w.serial += 1
            edited = (p.root / m.target).read_text(encoding="utf-8").replace("number", "No.")
            (p.root / m.target).write_text(f"{edited}Edit {self.w.serial}.\n", encoding="utf-8")
            p.git("commit", "--quiet", "-am", f"typo in {m.target}")
        elif how == "delete":
            p.git("rm", "--quiet", m.target)
            p.git("commit", "--quiet", "-m", f"take down {m.target}")
            self._taken_down(m.target)
        else:
            # A name of its own each time: an article renamed before may be back at its path.
            self.w.serial += 1
            p.git("mv", m.target, m.target.replace(".mdx", f"-old-{self.w.serial}.mdx"))
            p.git("commit", "--quiet", "-m", f"rename {m.target}")
            self._taken_down(m.target)
        p.git("push", "--quiet", "origin", "HEAD:main")
        return f"person {how}s {m.target} of {job_id[:8]}"

    def person_edits_the_writers_checkout(self, rng: random.Random) -> str:
        """A person adds a line to an article in the checkout gitpub writes from, and commits
        it or leaves it for gitpub to commit (`hand_edits = "all"`)."""
        blog = self.w.blog
        if blog.git("status", "--porcelain", "--untracked-files=no"):
            return ""  # an edit still waiting (one in conflict, say): not applicable now
        here = blog.git("ls-files", "content/posts").split()
        if not here:
            return ""
        path = rng.choice(sorted(here))
        self.w.serial += 1
        line = f"Hand edit {self.w.serial} in the writer's checkout."
        with open(blog.root / path, "a", encoding="utf-8") as fh:
            fh.write(f"\n{line}\n")
        self.w.hand_edits.append(line)
        if rng.random() < 0.5:
            blog.git("commit", "--quiet", "-am", f"hand edit {self.w.serial}")
            return f"a person commits a line to {path} in the writer's checkout"
        return f"a person adds a line to {path} in the writer's checkout, uncommitted"

    def person_force_pushes_a_takedown(self, rng: random.Random) -> str:
        """The newest commit goes, by a force-push, when it is one job's publication."""
        p = self._person_fresh()
        body = p.git("log", "-1", "--format=%B")
        owner = next((j for j in self.w.jobs if f"Blog-Job-Id: {j}" in body), None)
        if owner is None or _git_ok(p.root, "rev-parse", "--verify", "HEAD~1").returncode:
            return ""  # not applicable now: the walk draws again
        # A reviewer's merge no worker has seen yet: for gitpub it never happened, so taking
        # it off takes down nothing gitpub knew was published (a job a person retried since
        # its own takedown stays theirs to publish).
        unseen = self.w.jobs[owner].merged and self.state(owner)["state"] == "IN_REVIEW"
        p.git("reset", "--quiet", "--hard", "HEAD~1")
        p.git("push", "--quiet", "--force", "origin", "HEAD:main")
        self.w.jobs[owner].gone = True  # even where an older version of its article is back
        if self.w.jobs[owner].merged:
            self.w.jobs[owner].merged, self.w.jobs[owner].deleted = False, True
        target = self.w.jobs[owner].target
        if not unseen and _git_ok(p.root, "cat-file", "-e", f"HEAD:{target}").returncode:
            self._taken_down(target)
        return f"person force-pushes {owner[:8]} away"

    def _taken_down(self, target: str) -> None:
        """Every job that wrote `target`: its article is gone and must stay gone; the
        publication of each one published left the branch (one not yet published has none)."""
        for job_id, m in self.w.jobs.items():
            if m.target == target:
                m.taken_down = True
                m.gone = m.gone or self.state(job_id)["state"] == "PUBLISHED"
                if m.merged and m.review:
                    # Merged and taken off again before any worker looked: for gitpub the
                    # merge never happened, so the deleted branch reads as a rejection.
                    m.merged, m.deleted = False, True

    def _waiting_reviews(self) -> list[str]:
        # Not a branch gitpub withdrew (it stood on a commit a person took down) in a pass
        # that died before it recorded so: there is nothing left to act on.
        return [
            j
            for j in self.jobs_in(State.IN_REVIEW)
            if not self.w.jobs[j].merged
            and not self.w.jobs[j].deleted
            and _git_ok(
                self.w.blog.remote, "rev-parse", "--verify", str(self.state(j)["review_branch"])
            ).returncode
            == 0
        ]

    def reviewer_acts(self, rng: random.Random) -> str:
        how = rng.choice(["squash", "merge", "rebase", "edit", "delete"])
        waiting = self._waiting_reviews()
        if not waiting:
            return ""  # not applicable now: the walk draws again
        job_id = rng.choice(waiting)
        m = self.w.jobs[job_id]
        branch = str(self.state(job_id)["review_branch"])
        p = self._person_fresh()
        if how == "delete":
            p.git("push", "--quiet", "origin", f":{branch}")
            m.deleted = True
            return f"reviewer deletes {branch}"
        if how == "edit":
            p.git("checkout", "--quiet", "-B", "edit", f"origin/{branch}")
            if m.branch_text is None:
                m.branch_text = m.text.replace("Post", "Reviewed post")
            else:  # edited before: a change again (git refuses an empty commit)
                m.branch_text += "Reviewed again.\n"
            (p.root / m.target).write_text(m.branch_text, encoding="utf-8")
            p.git("commit", "--quiet", "-am", "reviewer's edit")
            p.git("push", "--quiet", "origin", f"HEAD:{branch}")
            p.git("checkout", "--quiet", "main")
            return f"reviewer edits {branch}"
        if how == "squash":
            done = _git_ok(p.root, "merge", "--squash", f"origin/{branch}")
            ok = done.returncode == 0 and _git_ok(p.root, "commit", "--no-edit").returncode == 0
        elif how == "merge":
            ok = (
                _git_ok(p.root, "merge", "--no-ff", "-m", "merge", f"origin/{branch}").returncode
                == 0
            )
        else:
            ok = _git_ok(p.root, "cherry-pick", f"origin/main..origin/{branch}").returncode == 0
        if not ok:
            # A person's merge that conflicts (a font output, an article edited on both
            # sides): this person gives up and leaves the branch for later.
            _git_ok(p.root, "merge", "--abort")
            _git_ok(p.root, "cherry-pick", "--abort")
            p.git("reset", "--quiet", "--hard", "origin/main")
            return f"reviewer {how}: conflicts, left for later"
        # What the merge put on the branch: the job's article, and any other the branch still
        # held that the published branch had lost meanwhile (a takedown made after the
        # review branch was pushed; or, by a force-push, a newer version of an article that
        # is still there): the person's merge brought it back, not gitpub.
        back = {m.target, *p.git("diff", "--name-only", "--diff-filter=AM", "origin/main").split()}
        p.git("push", "--quiet", "origin", "HEAD:main", f":{branch}")
        if _git_ok(p.root, "cat-file", "-e", f"HEAD:{m.target}").returncode:
            # git followed a person's rename of the article: the job's change went into the
            # renamed file and its own path holds nothing, so for gitpub the branch was
            # deleted unmerged.
            m.deleted = True
        else:
            m.merged = True
        for other_id, other in self.w.jobs.items():
            if other.target in back:
                # A person put the article back: theirs to do. Unless a worker saw it gone
                # first, for gitpub it never left when its commit is still in the history
                # (another version replaced it, as an edit does) or the job's own bytes are
                # back (a rewritten history that kept them still publishes it).
                other.taken_down = False
                if other.gone and not self.state(other_id)["withdrawn"]:
                    kept = self._in_history(other_id, p)
                    other.restored = not kept and self._own_bytes(other, p)
                    other.gone = not (kept or other.restored)
        return f"reviewer {how}-merges {branch}"

    def _in_history(self, job_id: str, p: Blog) -> bool:
        commit = str(self.state(job_id)["remote_commit"])
        return _git_ok(p.root, "merge-base", "--is-ancestor", commit, "HEAD").returncode == 0

    def _own_bytes(self, m: Modelled, p: Blog) -> bool:
        shown = _git_ok(p.root, "show", f"HEAD:{m.target}")
        return shown.returncode == 0 and shown.stdout == m.text

    # -------------------------------------------------------------------- the promise

    def every_job_is_in_a_named_state(self) -> None:
        names = {s.value for s in State}
        for job_id in self.w.jobs:
            assert self.state(job_id)["state"] in names

    def published_means_on_the_branch_once(self) -> None:
        blog = self.w.blog
        history = set(blog.remote_log())
        bodies = blog.remote_git("log", "--format=%H %B%x00", "main")
        for job_id, m in self.w.jobs.items():
            job = self.state(job_id)
            commits = bodies.count(f"Blog-Job-Id: {job_id}")
            assert commits <= m.publications, (job_id, commits, m)
            if job["state"] == "PUBLISHED" and not m.gone:
                # In the history, or its own bytes kept by a history a person rewrote, or put
                # back by a person's merge (whose later edits of it are theirs).
                own = _git_ok(blog.remote, "show", f"main:{m.target}").stdout == m.text
                assert job["remote_commit"] in history or own or m.restored, (job_id, job)

    def job_commits_change_only_their_own_files(self) -> None:
        """The commits gitpub made (its committer identity): a person's squash or rebase of a
        review branch carries the job's trailers too, and whatever else the person's merge
        brought (say an article the branch still held after a takedown) is the person's."""
        blog = self.w.blog
        out = blog.remote_git("log", "--first-parent", "--format=%H %ce", "main")
        for line in out.splitlines():
            oid, _, committer = line.partition(" ")
            if not committer.startswith("gitpub@"):
                continue
            body = blog.remote_git("log", "-1", "--format=%B", oid)
            owner = next((j for j in self.w.jobs if f"Blog-Job-Id: {j}" in body), None)
            if owner is None or "Blog-Manifest-Sha256" not in body:
                continue
            changed = blog.remote_git(
                "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", oid
            ).split()
            allowed = {self.w.jobs[owner].target, FONT_OUTPUT}
            assert set(changed) <= allowed, (owner, changed)
        if not self.w.fonts:  # the font blog has no README
            assert blog.remote_file("README.md") == b"a blog\n"

    def a_takedown_stays_down(self) -> None:
        """A taken-down article is back only by a person, or by a job that was not taken
        down: never by the job whose publication the person removed (another job writing the
        same path excuses nothing but its own commit)."""
        blog = self.w.blog
        tip = blog.remote_git("rev-parse", "main")
        for job_id, m in self.w.jobs.items():
            if not m.taken_down:
                continue
            if _git_ok(blog.remote, "cat-file", "-e", f"{tip}:{m.target}").returncode:
                continue  # still down
            body = blog.remote_git("log", "-1", "--format=%B", tip, "--", m.target)
            writer = next((j for j in self.w.jobs if f"Blog-Job-Id: {j}" in body), None)
            assert writer is None or not self.w.jobs[writer].taken_down, (
                job_id,
                f"a taken-down article came back by job {writer}",
            )

    def skipped_only_for_a_duplicate_or_an_abandon(self) -> None:
        for job_id in self.jobs_in(State.SKIPPED):
            events = self.w.blog.job(job_id)["events"]
            last = next(e for e in reversed(events) if e["to_state"] == "SKIPPED")
            said = str(last["detail"]).lower() + last["step"]
            assert "abandon" in said or "no change" in said or "same article" in said, events

    def the_remote_is_sound(self) -> None:
        res = _git_ok(self.w.blog.remote, "fsck", "--strict", "--no-progress")
        assert res.returncode == 0, res.stderr

    def after_a_pass(self, writer: bool = True) -> None:
        """What a worker's pass to idle leaves: nothing in flight, reviews as people left them,
        a person's edit of the writer's checkout delivered or kept for them (`writer`: the
        pass ran there too; another node's worker cannot see that checkout)."""
        w = self.w
        tip = w.blog.remote_git("rev-parse", "main")
        self._hand_edits_delivered_or_kept(writer)
        for job_id, m in w.jobs.items():
            job = self.state(job_id)
            st_ = job["state"]
            if st_ == "PUBLISHED":
                there = _git_ok(w.blog.remote, "cat-file", "-e", f"{tip}:{m.target}")
                # At the tip, or noticed as withdrawn by this very pass.
                assert there.returncode == 0 or job["withdrawn"], (job_id, job)
                assert job["withdrawn"] or not m.gone, (job_id, "its publication left")
            assert st_ not in (
                "RECEIVED",
                "PREPARING",
                "READY_TO_COMMIT",
                "LOCAL_COMMITTING",
                "LOCAL_COMMITTED",
                "PUSHING",
                "RECHECK_CANDIDATES",
                "RECOVERING",
                # The walk's remote is on disk and never fails: no delivery ever has to wait
                # for a next attempt, nor run out of them.
                "RETRY_WAIT",
                "FAILED",
            ), (job_id, w.blog.job(job_id)["events"])
            if not m.review or st_ != "IN_REVIEW":
                if m.review and m.merged:
                    assert st_ == "PUBLISHED", (job_id, w.blog.job(job_id)["events"])
                if job["failure_code"] == "rejected_in_review":
                    assert m.deleted, (job_id, "rejected, though no person deleted its branch")
                continue
            assert not m.merged, (job_id, "merged by a person, still IN_REVIEW")
            assert not m.deleted, (job_id, "deleted by a person, still IN_REVIEW")
            branch = str(job["review_branch"])
            held = _git_ok(w.blog.remote, "show", f"{branch}:{m.target}")
            assert held.returncode == 0, (job_id, branch, "its review branch lost its article")
            assert held.stdout in (
                m.text.rstrip("\n"),
                m.text,
                m.branch_text,
                (m.branch_text or "").rstrip("\n"),
            ), (job_id, held.stdout)

    def _hand_edits_delivered_or_kept(self, writer: bool) -> None:
        """Every line a person added in the writer's checkout is on the remote branch's history,
        or still in the checkout (a commit, or the file): never lost. After a pass there, one
        not delivered is counted in conflict: it waits for that person."""
        blog = self.w.blog
        waiting = [
            line
            for line in self.w.hand_edits
            if not blog.remote_git("log", "--format=%H", "--fixed-strings", f"-S{line}", "main")
        ]
        # Asked only when one is not delivered: `status` is a process of its own, every pass.
        stuck = bool(waiting) and " in conflict (" in blog.ok("status").stdout
        for line in waiting:
            kept = blog.git("log", "--format=%H", "--fixed-strings", f"-S{line}", "HEAD")
            kept = kept or blog.git("grep", "--fixed-strings", "-l", line, check=False)
            assert kept, (line, "a person's edit of the writer's checkout was lost")
            assert stuck or not writer, (line, "neither delivered nor said to conflict")


RULES: tuple[tuple[str, int], ...] = (
    ("submit", 5),
    ("work", 4),
    ("fleet_works", 2),
    ("crash", 2),
    ("sigkill", 1),
    ("reviewer_acts", 3),
    ("person_changes_a_post", 2),
    ("person_force_pushes_a_takedown", 1),
    ("person_edits_the_writers_checkout", 1),
    ("retry", 1),
    ("time_passes", 1),
)
INVARIANTS = (
    "every_job_is_in_a_named_state",
    "published_means_on_the_branch_once",
    "job_commits_change_only_their_own_files",
    "a_takedown_stays_down",
    "skipped_only_for_a_duplicate_or_an_abandon",
    "the_remote_is_sound",
)


def walk(base: Path, fonts: bool, seed: int, steps: int, nodes: int = 1) -> list[str]:
    """One seeded walk: `steps` rules, each followed by every invariant; the steps taken.
    A broken promise fails naming the seed and every step that led to it."""
    rng = random.Random(seed)
    model = PromiseModel(base, fonts, nodes)
    names = [name for name, _ in RULES]
    weights = [weight for _, weight in RULES]
    taken: list[str] = []
    for _ in range(steps * 4):
        if len(taken) == steps:
            break
        rule: Callable[[random.Random], str] = getattr(model, rng.choices(names, weights)[0])
        try:
            said = rule(rng)
            if not said:
                continue
            taken.append(said)
            for check in INVARIANTS:
                getattr(model, check)()
        except AssertionError as exc:
            trail = "\n  ".join(taken)
            raise AssertionError(f"seed {seed}, after:\n  {trail}\n{exc}") from exc
    for node in model.nodes:  # the walk ends with a pass on every node: all settles
        res = node.blogpub("run", "--until-idle", env=model.env())
        assert res.returncode == 0, res
    try:
        model.after_a_pass()
        for check in INVARIANTS:
            getattr(model, check)()
    except AssertionError as exc:
        trail = "\n  ".join(taken)
        raise AssertionError(
            f"seed {seed}, after:\n  {trail}\n  a pass on every node\n{exc}"
        ) from exc
    if VERBOSE:
        print(f"model seed {seed}:\n  " + "\n  ".join(taken), flush=True)
    return taken


@pytest.mark.parametrize("seed", SEEDS)
def test_the_promise_holds_on_a_plain_blog(tmp_path: Path, seed: int) -> None:
    taken = walk(tmp_path, False, seed, STEPS)
    assert any(t.startswith("submit") for t in taken)  # a walk that submits nothing is void


@pytest.mark.parametrize("seed", SEEDS)
def test_the_promise_holds_on_a_blog_with_fonts(tmp_path: Path, seed: int) -> None:
    taken = walk(tmp_path, True, seed, STEPS)
    assert any(t.startswith("submit") for t in taken)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_promise_holds_for_two_nodes_of_a_shared_store(
    tmp_path: Path, seed: int, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worker clones and one shared PostgreSQL store: any node submits, any node works,
    any node dies."""
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    taken = walk(tmp_path, False, seed, STEPS, nodes=2)
    assert any(t.startswith("submit") for t in taken)
