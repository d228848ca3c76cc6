"""Curated mutants of gitpub's promises, each of which a named test must kill.

Every mutant breaks one promise on purpose in a temporary COPY of the package (never in this
tree) and runs only the tests written to guard that promise, with the copy first on PYTHONPATH
so that `python -m gitpub` started by a test runs the mutant too. A mutant that no test kills
is a promise nothing guards: the run fails.

    python tests/mutation/run.py              # all mutants, sequentially; prints the table
    python tests/mutation/run.py --list       # names, files, guarding tests
    python tests/mutation/run.py NAME...      # only these mutants

A mutant is (name, file, exact old snippet, replacement, tests). The snippet must occur exactly
once in the file: when the code moves, the run stops with the mutant's name and the mutant is
updated by hand — it never silently tests nothing.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECOVERY = "tests/ops/test_recovery.py::"
SAFETY = "tests/deliver/test_remote_safety.py::"
PUBLISH = "tests/deliver/test_publish.py::"
SECRETS = "tests/scan/test_secrets.py::"
PLACEMENT = "tests/scan/test_scan_placement.py::"
WORKFLOWS = "tests/deliver/test_workflows.py::"
COMPOSE = "tests/deliver/test_compose.py::"
MODEL = "tests/model/test_promise_model.py::"
CONCURRENCY = "tests/ops/test_concurrency.py::"
LANDMARK = "tests/deliver/test_landmark.py::"
MODEL_FONTS = MODEL + "test_the_promise_holds_on_a_blog_with_fonts"
LOOKED_AT = (
    "        if j.target_path in deleted or (j.updated_at >= since and j.job_id not in seen.held)\n"
)
STOLEN = '        raise LeaseLost(f"job {job.job_id}: lease taken by another worker")'


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # inside the package, e.g. gitpub/deliver/relay.py
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids; the first one is expected to kill it fastest


MUTANTS = (
    Mutant(
        "prepare builds over a path clash",
        "gitpub/prepare/__init__.py",
        "        clash = rules.clash([path, *rules.asset_paths(target, assets).values()], "
        "existing)\n",
        "        clash = None\n",
        (
            "tests/deliver/test_write_set.py::test_the_review_names_the_clash_before_anything_is_built",
        ),
    ),
    Mutant(
        "the MCP worker outlives its server",
        "gitpub/mcpserver/worker.py",
        "    threading.Thread(target=_watch_parent, "
        'name="gitpub-parent-watch", daemon=True).start()\n',
        "",
        ("tests/mcpserver/test_mcp_worker.py::test_the_worker_stops_when_the_server_is_killed",),
    ),
    Mutant(
        "a takedown pushed back as a hand edit",
        "gitpub/deliver/withdrawn.py",
        "    return sorted(Oid(o) for o in mine & were)\n",
        "    return []\n",
        ("tests/deliver/test_takedown.py::test_a_takedown_is_never_pushed_back",),
    ),
    Mutant(
        "the door lets a token in a name through",
        "gitpub/intake/checks.py",
        "    found = scan(value, allow=allow)\n",
        "    found = []\n",
        ("tests/scan/test_secrets.py::test_a_name_holding_a_token_is_refused_at_the_door",),
    ),
    Mutant(
        "SKIPPED on a stale fetch",
        "gitpub/prepare/__init__.py",
        "            if fresh != base:\n",
        "            if False:\n",
        ("tests/deliver/test_remote_truth.py::test_a_stale_fetch_never_ends_a_publish_in_skipped",),
    ),
    Mutant(
        "the write-set guard waved through",
        "gitpub/deliver/batch.py",
        "        beyond = checked.check(ctx.repo, stack, rebased, own)\n",
        "        beyond = []\n        checked.passed[rebased] = stack\n",
        (
            "tests/deliver/test_write_set.py::test_the_guard_stops_a_job_commit_that_deletes_another_file",
        ),
    ),
    Mutant(
        "git read in the user's language",
        "gitpub/git/process.py",
        '    env["LC_ALL"] = "C"\n',
        "",
        ("tests/git/test_git_locale.py::test_git_run_by_gitpub_says_fatal_in_any_locale",),
    ),
    Mutant(
        "confirmation ignores the manifest",
        "gitpub/git/trailers.py",
        'pair = (found.get(JOB_ID, ""), found.get(MANIFEST, ""))',
        'pair = next((w for w in wanted if w[0] == found.get(JOB_ID)), ("", ""))',
        (
            "tests/deliver/test_confirm.py::test_job_id_with_another_manifest_does_not_confirm",
            SAFETY + "test_a_remote_commit_with_the_job_id_but_another_manifest_is_no_confirmation",
        ),
    ),
    Mutant(
        "confirmation by trailers alone",
        "gitpub/deliver/confirm.py",
        "        bad = differing_paths(ctx, oid, entries)\n",
        "        bad: list[str] = []\n",
        (
            "tests/deliver/test_confirm.py::test_forged_trailer_commit_does_not_publish_the_job",
            SAFETY + "test_a_remote_commit_with_both_trailers_but_other_bytes_is_no_confirmation",
        ),
    ),
    Mutant(
        "the idempotency key stored sanitized, not hashed",
        "gitpub/intake/__init__.py",
        '    return sha256_hex(key.encode("utf-8"))',
        "    return Sha256(sanitize(key))",
        ("tests/intake/test_keys.py::test_two_secret_looking_keys_stay_two_jobs",),
    ),
    Mutant(
        "CAS always passes",
        "gitpub/deliver/commit.py",
        "return now == job.target_blob_sha256",
        "return True",
        (SAFETY + "test_cas_stops_an_update_even_when_git_would_merge_it_cleanly",),
    ),
    Mutant(
        "the sanitizer does nothing",
        "gitpub/scan/sanitize.py",
        "    return redact(text, allow=allow)",
        "    return text",
        (SAFETY + "test_secret_leaked_by_the_draft_step_is_review",),
    ),
    Mutant(
        "a token ends only where gitleaks ends it (not at full-width punctuation)",
        "gitpub/scan/rules.py",
        "    return pattern.replace(_GITLEAKS_END, _GENERIC_END if generic else _TOKEN_END)",
        "    return pattern",
        (
            PLACEMENT + "test_a_token_glued_to_full_width_punctuation_is_found_as_with_a_space",
            PLACEMENT + "test_at_least_90_percent_of_self_identifying_tokens_are_found_in_prose",
        ),
    ),
    Mutant(
        "a keyword rule's value is never judged (demo passwords are findings)",
        "gitpub/scan/detect.py",
        "            if not _judged_secret(rule, m, secret):\n                continue\n",
        "",
        (
            PLACEMENT + "test_demo_values_real_tutorials_show_are_no_findings",
            PLACEMENT + "test_at_most_1_in_100_real_posts_with_code_is_flagged",
        ),
    ),
    Mutant(
        "a key is sanitized as an article (password=aaaaaaaa1 kept)",
        "gitpub/scan/sanitize.py",
        "    return redact(name, allow=allow, name=True)",
        "    return redact(name, allow=allow)",
        (
            PLACEMENT
            + "test_a_name_or_key_redacts_any_credential_it_binds_an_article_only_a_real_one",
        ),
    ),
    Mutant(
        "submit's refusal of secrets skipped",
        "gitpub/intake/__init__.py",
        "    scan.refuse(text, req.source, allow=allowed)",
        "    pass",
        (SECRETS + "test_submit_refuses_a_secret_and_records_nothing",),
    ),
    Mutant(
        "an external command runs without this node's trust",
        "gitpub/trust/__init__.py",
        "if not here.ok or (role, tuple(argv)) not in here.current.commands:",
        "if False:",
        ("tests/trust/test_trust.py::test_a_pushed_command_never_runs_until_this_node_trusts_it",),
    ),
    Mutant(
        "the allowance binds the argv, not the code it reaches",
        "gitpub/trust/commands.py",
        "        files.update(tracked_code(cfg.root, skip))\n",
        "        pass\n",
        (
            "tests/trust/test_trust_code.py::test_a_push_rewriting_the_code_behind_a_trusted_command_"
            "asks_again[cd inside a shell string]",
        ),
    ),
    Mutant(
        "publishing an article asks for trust again",
        "gitpub/trust/code.py",
        "        if path in skip:\n",
        "        if path == CONFIG_FILE:\n",
        (
            "tests/trust/test_trust_code.py::test_publishing_articles_and_font_outputs_never_asks_again",
        ),
    ),
    Mutant(
        "a config that is not UTF-8 stops the worker",
        "gitpub/config/__init__.py",
        "    except UnicodeDecodeError as exc:\n",
        "    except UnicodeTranslateError as exc:\n",
        (
            "tests/config/test_config_faults.py::test_a_running_worker_keeps_its_config_and_says_which_"
            "file_once",
        ),
    ),
    Mutant(
        "a remote ref-lock race spends a retry",
        "gitpub/deliver/batch.py",
        "    elif not pushed.rejected_non_ff and not faults.ref_lock_race(pushed.stderr):\n",
        "    elif not pushed.rejected_non_ff:\n",
        (
            "tests/deliver/test_push_races.py::test_a_ref_lock_race_on_the_remote_retries_at_once_"
            "without_spending_a_retry",
        ),
    ),
    Mutant(
        "a full disk counts as a lost database",
        "gitpub/store/lost.py",
        "        except Unavailable:\n"
        "            raise  # a full disk, a failing filesystem: says nothing of the database\n",
        "",
        (
            "tests/store/test_store_faults.py::test_a_full_disk_is_named_never_lost_and_the_store_is_"
            "left_alone",
        ),
    ),
    Mutant(
        "a running worker keeps a deleted job database open",
        "gitpub/ops/runner.py",
        "    if not ctx.store.replaced():\n",
        "    if True:\n",
        (
            "tests/store/test_store_faults.py::test_a_state_dir_removed_under_a_running_worker_is_"
            "noticed_at_the_next_pass",
        ),
    ),
    Mutant(
        "a hand edit holding a secret is committed and pushed",
        "gitpub/sync/editgit.py",
        "    paths = [path for path, _ in deliverable_changes(ctx)[0]]\n",
        "    paths = [path for path, _ in dirty_changes(ctx)]\n",
        (
            "tests/sync/test_hand_edit_secrets.py::test_a_hand_edit_with_a_secret_is_held_back_until_"
            "allowed",
        ),
    ),
    Mutant(
        "no lease renewal before a push",
        "gitpub/deliver/batch.py",
        "    pending = leases.renew_many(ctx.store, pending, ctx.config.retry.lease_seconds)\n",
        "",
        (RECOVERY + "test_a_lease_taken_during_the_fetch_stops_the_push",),
    ),
    Mutant(
        "a renewal that does not notice a stolen lease",
        "gitpub/store/leases.py",
        "    if not kept:\n" + STOLEN,
        "    if kept is None:\n" + STOLEN,
        (RECOVERY + "test_stolen_lease_stops_the_old_worker_without_side_effects",),
    ),
    Mutant(
        "a crash point skipped (after the push, before the database)",
        "gitpub/deliver/batch.py",
        'crash.point("after_push_before_db")',
        "pass",
        (RECOVERY + "test_crash_at_every_point_then_restart[after_push_before_db-1-sqlite]",),
    ),
    Mutant(
        "the recheck fingerprint ignored",
        "gitpub/deliver/recheck.py",
        "if fp == job.last_recheck_delta_sha:",
        "if False:",
        (SAFETY + "test_a_delta_already_judged_is_not_judged_again_after_a_rewrite",),
    ),
    Mutant(
        "the recheck judges the whole delta again",
        "gitpub/deliver/recheck.py",
        "if seen and seen != job.base_commit and ctx.repo.is_ancestor(seen, tip):",
        "if False:",
        (SAFETY + "test_recheck_judges_each_new_remote_delta_once",),
    ),
    Mutant(
        "font regeneration skipped",
        "gitpub/deliver/fontmerge.py",
        "            _rebuild_staged(cfg, self.root, self.progress, self.private)\n",
        "            pass\n",
        (
            "tests/fonts/test_fonts_publish.py::test_two_nodes_font_only_conflict_is_regenerated_not_a_conflict",
        ),
    ),
    Mutant(
        "a hook template that starts Python",
        "hooks/reference-transaction",
        "# gitpub's own updates (it sets GITPUB_WRITER",
        "python3 -c 'pass' 2>/dev/null || :\n# gitpub's own updates (it sets GITPUB_WRITER",
        (
            "tests/sync/test_hooks_install.py::"
            "test_hooks_start_no_python_for_ref_updates_that_do_not_concern_gitpub",
        ),
    ),
    Mutant(
        "a job writing a second path",
        "gitpub/prepare/__init__.py",
        "        written = [path]\n",
        "        (worktree / (path + '.copy.md')).write_bytes(text.encode('utf-8'))\n"
        "        written = [path, path + '.copy.md']\n",
        (PUBLISH + "test_submit_run_publishes_exactly_one_commit_with_trailers",),
    ),
    Mutant(
        "a lease checkpoint that trusts the job in hand however old",
        "gitpub/store/leases.py",
        "if job.lease_token is not None and _left(job) > seconds / 2:",
        "if job.lease_token is not None:",
        (RECOVERY + "test_a_checkpoint_asks_the_store_once_half_the_lease_is_spent[sqlite]",),
    ),
    Mutant(
        "an external step started without a checkpoint after its worker stalled",
        "gitpub/prepare/protocol.py",
        "        # may have lost the job to one that is running this very step (LeaseLost here).\n"
        "        run.heartbeat()\n",
        "        pass\n",
        ("tests/prepare/test_protocol.py::test_a_step_never_starts_once_its_worker_lost_the_job",),
    ),
    Mutant(
        "a step checkpoint ignored",
        "gitpub/prepare/record.py",
        "if name in self.done and path.is_file():",
        "if False:",
        (RECOVERY + "test_crash_at_every_point_then_restart[after_draft-1-sqlite]",),
    ),
    Mutant(
        "a killed step is run again, not adopted",
        "gitpub/prepare/protocol.py",
        "pid = _read_pid(pid_file)",
        "pid = None",
        (RECOVERY + "test_draft_killed_mid_run_is_adopted_not_paid_again",),
    ),
    Mutant(
        "an unbounded retry budget",
        "gitpub/deliver/relay.py",
        "exhausted = attempt >= job.max_attempts",
        "exhausted = False",
        (RECOVERY + "test_budget_exhaustion_then_probe_publishes_without_new_draft",),
    ),
    Mutant(
        "a retry due at once (no backoff)",
        "gitpub/deliver/relay.py",
        '"next_retry_at": at(clock.time() + delay)',
        '"next_retry_at": at(clock.time())',
        (PUBLISH + "test_unreachable_remote_waits_then_publishes_once",),
    ),
    Mutant(
        "the worker waits holding the delivery lock",
        "gitpub/ops/runner.py",
        "                ctx.store.wait(interval)\n",
        '                with ctx.locks.hold("delivery"):\n'
        "                    ctx.store.wait(interval)\n",
        (RECOVERY + "test_retry_waits_hold_no_lock",),
    ),
    Mutant(
        "delivery without the delivery lock",
        "gitpub/deliver/relay.py",
        """    with ctx.locks.hold("delivery"):
        results = batch.deliver_locked(ctx, plain, probes, again) if plain else {}""",
        """    with contextlib.nullcontext():
        results = batch.deliver_locked(ctx, plain, probes, again) if plain else {}""",
        (RECOVERY + "test_prepare_is_not_blocked_by_a_held_delivery_lock",),
    ),
    Mutant(
        "a batch judges no job against the articles earlier jobs are delivering",
        "gitpub/prepare/__init__.py",
        "        waiting = queued.articles(self.ctx, self.job, path)\n",
        "        waiting = {}\n",
        ("tests/deliver/test_batch.py::test_one_text_under_two_keys_in_one_batch_publishes_once",),
    ),
    Mutant(
        "a scheduled job claimed by a dead worker waits out its lease",
        "gitpub/store/reads.py",
        "state IN ('SCHEDULED', 'RETRY_WAIT', 'FAILED')",
        "state IN ('RETRY_WAIT', 'FAILED')",
        (RECOVERY + "test_a_scheduled_job_claimed_by_a_dead_worker_is_taken_at_once[sqlite]",),
    ),
    Mutant(
        "the external steps of a worker run past [steps] concurrency",
        "gitpub/prepare/steps.py",
        "    with throttle.place(cfg.concurrency, heartbeat, beat_every):\n",
        "    with throttle.place(None, heartbeat, beat_every):\n",
        (CONCURRENCY + "test_steps_concurrency_one_caps_overlap_at_one",),
    ),
    Mutant(
        "a job prepared beside an earlier one is judged without its article",
        "gitpub/prepare/__init__.py",
        "        if self.turn is not None:\n            self.turn(self.beat)\n",
        "        pass\n",
        (CONCURRENCY + "test_a_job_is_judged_against_the_article_of_one_prepared_beside_it",),
    ),
    Mutant(
        "a revision rides in the batch of the article it revises",
        "gitpub/ops/worker.py",
        "            self.flush()\n",
        "            pass\n",
        (
            "tests/deliver/test_batch.py::test_a_revision_of_an_article_still_on_its_way_is_delivered_after_it",
        ),
    ),
    Mutant(
        "a font blog's batch stacked on the remote tip, not on the jobs before",
        "gitpub/deliver/replay.py",
        "fontmerge.rebase_job(ctx, job, worktree, tip)",
        "fontmerge.rebase_job(ctx, job, worktree, ctx.tracking_ref)",
        (
            "tests/deliver/test_batch.py::"
            "test_a_batch_in_a_font_blog_goes_out_in_one_push_with_the_subset_of_every_article",
        ),
    ),
    Mutant(
        "the demo stops saying what it regenerated",
        "gitpub/cli/commands/demo.py",
        'note = " (font-only conflict: subsets regenerated)" if "fonts:regenerated"',
        'note = "" if "fonts:regenerated"',
        ("tests/cli/test_demo.py::test_demo_builds_its_own_font_without_a_system_one",),
    ),
    Mutant(
        "external_sync staging every path",
        "gitpub/sync/editgit.py",
        "return cfg.publish.content + cfg.font_outputs",
        'return (".",)',
        (
            "tests/sync/test_external_sync.py::"
            "test_uncommitted_typo_found_by_reconcile_when_every_hint_is_lost",
        ),
    ),
    Mutant(
        "locks taken out of order allowed",
        "gitpub/git/locks.py",
        "if ORDER.index(outer) >= rank:",
        "if False:",
        (RECOVERY + "test_locks_taken_out_of_order_raise",),
    ),
    Mutant(
        "confirmation from local branches too",
        "gitpub/git/trailers.py",
        "tip = repo.resolve(tracking_ref)\n    if tip is None:\n        return {}\n"
        "    hide = [base] if base else []",
        "tip = repo.resolve(tracking_ref)\n    if tip is None:\n        return {}\n"
        "    tip = repo.resolve('refs/heads/leftover') or tip\n"
        "    hide = [base] if base else []",
        (PUBLISH + "test_remote_confirmation_ignores_local_branches",),
    ),
    Mutant(
        "a half-made job worktree left in place",
        "gitpub/git/repair.py",
        "        if half.ours:",
        "        if False:",
        (
            "tests/git/test_wedge.py::test_a_half_made_worktree_left_by_git_worktree_add_is_repaired",
        ),
    ),
    Mutant(
        "a derived path overwriting an existing article",
        "gitpub/prepare/target.py",
        "    if not target.explicit:\n        return Verdict(",
        "    if False:\n        return Verdict(",
        (
            "tests/prepare/test_judge_rules.py::"
            "test_title_derived_path_that_exists_goes_to_review_and_the_file_stays",
        ),
    ),
    Mutant(
        "the user folders ignore the XDG variables",
        "gitpub/core/userdirs.py",
        "platformdirs.user_config_dir(APP, appauthor=False)",
        'str(Path.home() / ".config" / APP)',
        ("tests/cli/test_userdirs.py::test_the_folders_are_platformdirs_ones",),
    ),
    Mutant(
        "the MDX check cuts a tag off after 50 lines",
        "gitpub/site/validate.py",
        "            window *= 4\n",
        "            return k, 0\n",
        (
            "tests/site/test_corpus.py::test_real_mdx_pages_pass_the_builtin_check["
            "vercel-ai/content/docs/07-reference/01-ai-sdk-core/22-dynamic-tool.mdx]",
        ),
    ),
    Mutant(
        "prepare reads the source as text (CRLF becomes LF)",
        "gitpub/prepare/record.py",
        '    return path.read_bytes().decode("utf-8")',
        '    return path.read_text("utf-8")',
        (
            "tests/site/test_site_bytes.py::test_a_real_crlf_post_is_published_byte_for_byte_and_"
            "skipped_when_sent_again",
        ),
    ),
    Mutant(
        "a near-duplicate is skipped",
        "gitpub/prepare/target.py",
        '        if steps.similar == "skip" and not target.explicit:',
        "        if True:",
        (
            "tests/prepare/test_similar_posts.py::test_a_near_duplicate_waits_for_a_person_naming_the_"
            "other_post[derived path]",
            "tests/prepare/test_similar_posts.py::test_a_near_duplicate_waits_for_a_person_naming_the_"
            "other_post[--target]",
        ),
    ),
    Mutant(
        "delivery skips a near-duplicate that reached the remote meanwhile",
        "gitpub/prepare/builtins.py",
        '        if score >= skip_at and similar == "skip":',
        "        if score >= skip_at:",
        (
            "tests/prepare/test_similar_posts.py::test_a_near_duplicate_reaching_the_remote_meanwhile_"
            "is_not_skipped_at_delivery",
        ),
    ),
    # Publishing workflows (docs/workflows.md): scheduled posts and review before publish.
    Mutant(
        "a scheduled post published before its time",
        "gitpub/store/reads.py",
        "        \"  OR (state = 'SCHEDULED' AND scheduled_at <= ?)\"\n",
        "        \"  OR (state = 'SCHEDULED' AND scheduled_at >= ?)\"\n",
        (WORKFLOWS + "test_a_scheduled_post_waits_then_publishes",),
    ),
    Mutant(
        "a scheduled post that never comes due",
        "gitpub/store/reads.py",
        "        \"  OR (state = 'SCHEDULED' AND scheduled_at <= ?)\"\n",
        "        \"  OR (state = 'SCHEDULED' AND scheduled_at <= ? AND 0)\"\n",
        (WORKFLOWS + "test_a_scheduled_post_waits_then_publishes",),
    ),
    Mutant(
        "review mode pushes to the published branch",
        "gitpub/deliver/relay.py",
        "    reviewed = [j for j in held if j.review]\n",
        "    reviewed, plain = [], list(held)\n",
        (WORKFLOWS + "test_review_mode_publishes_what_a_person_merges_and_nothing_else",),
    ),
    Mutant(
        "a squash merge is not recognised (confirmed by trailers only)",
        "gitpub/deliver/review.py",
        "        merged = _first_holding(ctx, line, version.files)\n",
        "        from gitpub.deliver import confirm\n\n"
        "        merged = confirm.find_published(ctx, job)\n",
        (WORKFLOWS + "test_review_mode_publishes_what_a_person_merges_and_nothing_else",),
    ),
    Mutant(
        "a review branch deleted unmerged waits forever",
        "gitpub/deliver/review.py",
        "    if not gone:\n        return None\n",
        "    return None\n",
        (WORKFLOWS + "test_review_mode_publishes_what_a_person_merges_and_nothing_else",),
    ),
    Mutant(
        "an unreachable remote reads as a rejection",
        "gitpub/deliver/review.py",
        "        return []  # unreachable: a deleted branch and a dropped network look alike\n",
        "        there = {}\n",
        (WORKFLOWS + "test_an_unreachable_remote_never_reads_as_a_rejection",),
    ),
    Mutant(
        "a new revision leaves the old job waiting on its branch",
        "gitpub/deliver/review.py",
        "        if older.target_path == job.target_path and older.job_id != job.job_id:\n",
        "        if False:\n",
        (
            WORKFLOWS
            + "test_a_new_revision_supersedes_the_old_one_visibly_and_a_merge_commit_publishes",
        ),
    ),
    Mutant(
        "the write-set guard waved through on the way to review",
        "gitpub/deliver/review.py",
        "        checked = guard.Checked()\n",
        "        checked = guard.Checked()\n"
        "        checked.check = lambda repo, parent, commit, allowed: (\n"
        "            checked.passed.update({commit: parent}) or []\n"
        "        )\n",
        (WORKFLOWS + "test_a_review_push_goes_through_the_write_set_guard",),
    ),
    Mutant(
        "a review job merged while its answer was lost is pushed again",
        "gitpub/deliver/review.py",
        '            results[job.job_id] = Result("published", "merged from review", merged)\n',
        "            pass\n",
        (WORKFLOWS + "test_a_merge_made_while_the_push_answer_was_lost_is_not_pushed_again",),
    ),
    Mutant(
        "a worker drives a shared job without its folder",
        "gitpub/store/leases.py",
        "    mine = [Job.from_row(c.row) for c in claimed]\n"
        "    store.fetch_folders([j.job_id for j in mine])\n",
        "    mine = [Job.from_row(c.row) for c in claimed]\n",
        (
            "tests/store/test_shared_store.py::test_a_fresh_clone_delivers_a_job_another_node_committed",
            "tests/store/test_statements.py::"
            "test_a_built_in_job_costs_the_shared_store_at_most_the_ceiling",
        ),
    ),
    Mutant(
        "a change of a shared job leaves its folder behind",
        "gitpub/store/jobs.py",
        "        for job_id in plans:\n            store.keep_folder(conn, job_id)\n",
        "",
        (
            "tests/store/test_shared_store.py::test_a_fresh_clone_delivers_a_job_another_node_committed",
        ),
    ),
    Mutant(
        "a step outliving its worker never lands its answer",
        "gitpub/prepare/protocol.py",
        """    '[ -z "$GITPUB_LANDING" ] || "$GITPUB_LANDING_PY" -m gitpub.store.lander """
        """"${s%/*}" '\n""",
        """    '[ -z "$GITPUB_LANDING" ] || true '\n""",
        (
            "tests/store/test_shared_store.py::"
            "test_a_draft_lands_in_the_store_when_its_worker_and_clone_are_gone",
        ),
    ),
    Mutant(
        "a pushed [store] table moves a node's jobs",
        "gitpub/config/__init__.py",
        "        store_url=store_url(user.store_url),\n",
        '        store_url=store_url(user.store_url or data.get("store", {}).get("url")),\n',
        ("tests/store/test_fleet.py::test_a_store_table_in_the_shared_config_never_moves_jobs",),
    ),
    Mutant(
        "a worker builds on a base its clone never fetched",
        "gitpub/deliver/commit.py",
        "    _fetch_missing_bases(ctx, todo)\n",
        "",
        (
            "tests/store/test_fleet.py::"
            "test_a_worker_whose_clone_is_behind_takes_over_a_job_another_began",
        ),
    ),
    Mutant(
        "a job rebased onto articles without subsets keeps short ones",
        "gitpub/deliver/fontmerge.py",
        "    written = _rebuild_staged(cfg, worktree, None, private=True)\n",
        "    written: list[str] = []\n",
        (
            "tests/fonts/test_fonts_publish.py::"
            "test_a_job_landing_on_articles_pushed_without_subsets_brings_them_up_to_date",
        ),
    ),
    Mutant(
        "the similarity bound drops an article that could reach the floor",
        "gitpub/prepare/builtins.py",
        "    allowed = len(grams) - math.ceil(floor * len(grams))",
        "    allowed = len(grams) // 20",
        (
            "tests/prepare/test_similarity.py::test_the_floor_drops_only_articles_that_cannot_reach_it",
        ),
    ),
    Mutant(
        "a dead worker's push lock holds up the fleet",
        "gitpub/store/pg.py",
        "                dead = holder is not None and "
        'lease_holder_dead(holder[0].partition(" ")[0])\n',
        "                dead = False\n",
        ("tests/store/test_shared_store.py::test_a_push_lock_whose_holder_died_is_taken_at_once",),
    ),
    Mutant(
        "a late lander answers a newer run of its step",
        "gitpub/store/spools.py",
        '            " WHERE job_id = ? AND name = ? AND started_at = ?",\n',
        '            " WHERE job_id = ? AND name = ? AND (started_at = ? OR 1 = 1)",\n',
        (
            "tests/store/test_shared_store.py::"
            "test_a_late_lander_never_answers_a_newer_run_of_its_step",
        ),
    ),
    Mutant(
        "a claim takes a job another worker holds",
        "gitpub/store/leases.py",
        '    where = f"{due[0]} AND (lease_token IS NULL OR lease_expires_at < ?)"\n',
        '    where = f"{due[0]} AND (lease_token IS NULL OR lease_expires_at < ? OR 1 = 1)"\n',
        (
            "tests/store/test_statements.py::"
            "test_one_statement_claims_several_jobs_and_skips_those_being_claimed",
            "tests/store/test_shared_store.py::"
            "test_a_worker_leaves_its_committed_jobs_to_the_node_delivering",
        ),
    ),
    Mutant(
        "a submission wakes no waiting worker",
        "gitpub/store/jobs.py",
        "    store.announce(conn)  # a submitted job: the waiting workers take it at once\n",
        "",
        (
            "tests/store/test_wake.py::test_a_submission_ends_a_waiting_workers_wait",
            "tests/store/test_wake.py::"
            "test_a_long_running_worker_publishes_a_submission_without_waiting_its_interval",
        ),
    ),
    Mutant(
        "a long-running worker sleeps its interval instead of waiting on the store",
        "gitpub/ops/runner.py",
        "                ctx.store.wait(interval)\n",
        "                time.sleep(interval)\n",
        (
            "tests/store/test_wake.py::"
            "test_a_long_running_worker_publishes_a_submission_without_waiting_its_interval",
        ),
    ),
    Mutant(
        "a claim of several jobs takes rows another claim holds",
        "gitpub/store/pg.py",
        'f" {where} ORDER BY created_at, job_id LIMIT ? FOR UPDATE SKIP LOCKED)"',
        'f" {where} ORDER BY created_at, job_id LIMIT ?)"',
        (
            "tests/store/test_statements.py::"
            "test_one_statement_claims_several_jobs_and_skips_those_being_claimed",
        ),
    ),
    Mutant(
        "two articles of one file name share a review branch",
        "gitpub/deliver/review.py",
        '    parts = [_ref_part(p) for p in PurePosixPath(job.target_path or "article").parts]\n'
        '    return ctx.config.publish.review_prefix + "/".join([*parts, job.job_id[:8]])\n',
        '    stem = PurePosixPath(job.target_path or "article").stem\n'
        "    return ctx.config.publish.review_prefix + _ref_part(stem)\n",
        (
            COMPOSE + "test_two_articles_of_one_file_name_get_two_review_branches_and_both_publish"
            "[sqlite]",
        ),
    ),
    Mutant(
        "a job of another target supersedes one in review",
        "gitpub/deliver/review.py",
        "        if older.target_path == job.target_path and older.job_id != job.job_id:\n",
        "        if older.job_id != job.job_id:\n",
        (COMPOSE + "test_two_titles_that_share_their_ascii_get_two_branches[sqlite]",),
    ),
    Mutant(
        "the review watch reads only this node's job folders",
        "gitpub/deliver/review.py",
        "        ctx.store.fetch_folder(job.job_id)\n",
        "",
        (
            COMPOSE
            + "test_a_fresh_worker_settles_a_squash_merged_review[postgresql-branch-deleted]",
        ),
    ),
    Mutant(
        "a merged review waits for the font outputs' bytes",
        "gitpub/deliver/review.py",
        "    derived = set(ctx.config.font_outputs)\n",
        "    derived: set[str] = set()\n",
        (
            COMPOSE + "test_two_font_posts_in_review_both_publish_after_a_fonts_resolved_merge"
            "[sqlite]",
        ),
    ),
    Mutant(
        "a review branch gitpub withdrew reads as a reviewer's rejection after a crash",
        "gitpub/deliver/review.py",
        "    withdrawn = _withdrawing(events)\n",
        "    withdrawn = None\n",
        (
            WORKFLOWS + "test_a_worker_that_dies_after_withdrawing_a_stranded_review_branch_"
            "leaves_it_stranded",
        ),
    ),
    Mutant(
        "a reviewer's edit reads as a rejection",
        "gitpub/deliver/review.py",
        "    if branch_tip is not None and branch_tip not in known:\n",
        "    if False:\n",
        (COMPOSE + "test_a_reviewers_edit_then_merge_publishes_the_edit[sqlite-edit-seen]",),
    ),
    Mutant(
        "a publication recorded after the takedown look saw its tip is never looked at",
        "gitpub/deliver/withdrawn.py",
        LOOKED_AT,
        "        if j.target_path in deleted\n",
        (
            "tests/deliver/test_takedown.py::test_a_push_found_on_the_remote_after_a_deletion_"
            "commit_is_withdrawn_once_recorded",
        ),
    ),
    Mutant(
        "an earlier attempt's landmark is read as this attempt's landed push",
        "gitpub/deliver/landmark.py",
        "            side = own if landed == commits[job_id] else earlier\n",
        "            side = own\n",
        (
            LANDMARK + "test_a_retry_publishes_again_past_the_landmark_its_first_attempt_left"
            "[after_rebase_before_push]",
        ),
    ),
    Mutant(
        "an earlier attempt's landmark refuses every push of a retried job",
        "gitpub/deliver/batch.py",
        "        landmark.clear_earlier(ctx, [j for j in stacked if j.job_id in earlier])\n",
        "        pass\n",
        (LANDMARK + "test_a_retry_publishes_again_past_the_landmark_its_first_attempt_left[None]",),
    ),
    Mutant(
        "a deletion commit is no takedown while the job's commit is in the history",
        "gitpub/deliver/withdrawn.py",
        "    if data is None:\n",
        "    if data is None and job.remote_commit not in held:\n",
        (COMPOSE + "test_an_ordinary_deletion_commit_is_a_takedown[sqlite]",),
    ),
    Mutant(
        "a takedown is looked for only on a worker's first look",
        "gitpub/deliver/withdrawn.py",
        LOOKED_AT,
        "        if j.updated_at >= since and j.job_id not in seen.held\n",
        (
            "tests/deliver/test_takedown.py::"
            "test_a_worker_that_keeps_running_notices_a_deletion_after_its_first_look",
        ),
    ),
    Mutant(
        "a publication newer than the clone's last fetch is taken for a takedown",
        "gitpub/deliver/withdrawn.py",
        "        gone = _gone(ctx, gone, now_tip)\n",
        "        pass\n",
        (
            "tests/store/test_fleet.py::"
            "test_a_publication_newer_than_a_clones_last_fetch_is_no_takedown",
        ),
    ),
    Mutant(
        "prepare (and so the dry run) lets a job aim at a post a person took down",
        "gitpub/prepare/__init__.py",
        "            decided = self.taken_down(base, path) or decided\n",
        "            pass\n",
        (
            "tests/prepare/test_dryrun.py::"
            "test_dry_run_of_a_taken_down_post_says_review_as_run_does",
        ),
    ),
    Mutant(
        "the dry run knows nothing of what the blog published",
        "gitpub/ops/dryrun.py",
        "else reads.published_to(ctx.blog_store, path)\n",
        "else []\n",
        (
            "tests/prepare/test_dryrun.py::"
            "test_dry_run_of_a_taken_down_post_says_review_as_run_does",
        ),
    ),
    Mutant(
        "a push never recorded, then taken down, is pushed again",
        "gitpub/deliver/batch.py",
        "    gone = confirm.taken_down_since(ctx, missing, tip) if tip is not None else {}\n",
        "    gone: dict[str, Oid] = {}\n",
        (
            "tests/deliver/test_takedown.py::"
            "test_a_push_never_recorded_then_taken_down_is_not_pushed_again",
        ),
    ),
    Mutant(
        "a step's run is begun under a lost lease",
        "gitpub/store/spools.py",
        '            " WHERE job_id = ? AND lease_token = ?",\n',
        '            " WHERE job_id = ? AND (lease_token = ? OR TRUE)",\n',
        ("tests/store/test_shared_store.py::test_a_step_is_begun_only_under_the_jobs_lease",),
    ),
    Mutant(
        "the embedded store's job folders are not synced before the database names them",
        "gitpub/store/db.py",
        "        return not self.shared\n",
        "        return False\n",
        (
            "tests/store/test_folder_sync.py::"
            "test_the_embedded_stores_folders_are_synced_before_they_count",
        ),
    ),
    Mutant(
        "a review merged with its history, then edited, reads as deleted unmerged",
        "gitpub/deliver/review.py",
        "    kept = _kept_in(ctx, job, versions, line) if standing else None\n",
        "    kept = None\n",
        (
            "tests/deliver/test_workflows.py::"
            "test_a_review_merged_with_its_history_then_edited_before_a_pass_is_published",
        ),
    ),
    Mutant(
        "a publication forced away and not yet noticed is no takedown",
        "gitpub/prepare/target.py",
        "        held = commits & set(let_go())\n",
        "        held = set()\n",
        (
            "tests/deliver/test_takedown.py::"
            "test_a_running_worker_holds_back_a_job_for_an_article_forced_away_since_its_last_pass",
        ),
    ),
    Mutant(
        "a step's run is begun after reading the lease, not locking it",
        "gitpub/store/spools.py",
        '            "UPDATE blog_publication SET updated_at = updated_at"\n',
        '            "SELECT 1 FROM blog_publication"\n',
        (
            "tests/store/test_shared_store.py::"
            "test_a_worker_stopped_before_its_step_record_commits_keeps_the_job",
        ),
    ),
    Mutant(
        "a round's jobs are each committed on their base, then replayed one by one",
        "gitpub/deliver/commit.py",
        "        linked = (\n            chain\n",
        "        linked = (\n            False\n",
        ("tests/deliver/test_batch.py::test_a_round_on_an_unmoved_tip_is_pushed_as_committed",),
    ),
    Mutant(
        "a conflicted job's branch carries the articles committed before it in its round",
        "gitpub/deliver/replay.py",
        "    if base is None or ctx.config.fonts is not None"
        " or objects.based_on(ctx.repo, head, base):\n",
        "    if True:\n",
        (
            "tests/deliver/test_batch.py::"
            "test_a_batch_of_twenty_with_one_conflict_publishes_nineteen_in_one_push",
        ),
    ),
    Mutant(
        "two blogs whose remotes are spelled relative share one schema",
        "gitpub/context.py",
        "    blog = blog_of(anchored(url, str(repo.root)), cfg.publish.branch)\n",
        "    blog = blog_of(url, cfg.publish.branch)\n",
        (
            "tests/store/test_shared_store.py::"
            "test_two_blogs_whose_remotes_are_both_spelled_relative_are_two_blogs",
        ),
    ),
    Mutant(
        "a holder's own step wakes every waiting worker",
        "gitpub/store/jobs.py",
        '        if to in WAKES and row["lease_token"] is None:\n',
        "        if to in WAKES:\n",
        (
            "tests/store/test_wake.py::test_a_holders_own_step_wakes_nobody_and_a_lease_given_up_does",
        ),
    ),
    Mutant(
        "a lease given up on a ready job wakes nobody",
        "gitpub/store/leases.py",
        "        if any(j.state in WAKES for j in held):\n",
        "        if False:\n",
        (
            "tests/store/test_wake.py::test_a_holders_own_step_wakes_nobody_and_a_lease_given_up_does",
        ),
    ),
    Mutant(
        "a delivery never asks the remote whether an earlier push landed",
        "gitpub/deliver/batch.py",
        "        marks = landmark.look(ctx, [j for j in held if j.job_id in again])\n",
        "        marks = {}\n",
        (
            "tests/store/test_shared_store.py::"
            "test_a_push_a_dead_node_landed_then_a_person_took_down_is_not_pushed_again",
        ),
    ),
    Mutant(
        "a push lands a job without its landmark",
        "gitpub/deliver/guard.py",
        "    return repo.push(remote, head, branch, expect=expect, marks=marks)\n",
        "    return repo.push(remote, head, branch, expect=expect, marks=None)\n",
        (
            LANDMARK + "test_the_push_that_lands_a_job_carries_its_landmark_which_holds_no_article",
            "tests/store/test_shared_store.py::"
            "test_a_push_a_dead_node_landed_then_a_person_took_down_is_not_pushed_again",
        ),
    ),
    Mutant(
        "a recorded publication keeps its landmark on the remote",
        "gitpub/deliver/relay.py",
        "    landmark.remove(\n",
        "    (lambda *_: True)(\n",
        (LANDMARK + "test_the_push_that_lands_a_job_carries_its_landmark_which_holds_no_article",),
    ),
    Mutant(
        "a remote that cannot push atomically gets nothing",
        "gitpub/git/repo.py",
        '            if b"does not support --atomic" not in proc.stderr:\n',
        "            if True:\n",
        (LANDMARK + "test_a_remote_that_cannot_push_atomically_gets_the_branch_alone",),
    ),
    Mutant(
        "a push found taken down at delivery is settled PUBLISHED but never withdrawn",
        "gitpub/deliver/batch.py",
        "                taken_down_at=tip,\n",
        "                taken_down_at=None,\n",
        (
            "tests/deliver/test_takedown.py::"
            "test_a_push_found_taken_down_at_delivery_is_withdrawn_in_the_same_record",
        ),
    ),
    Mutant(
        "a job committed before a takedown brings the post back at delivery",
        "gitpub/deliver/batch.py",
        "    why = _taken_down(ctx, job, tip, published)\n",
        "    why = None\n",
        (
            "tests/deliver/test_takedown.py::"
            "test_a_job_committed_before_a_takedown_is_held_back_at_delivery",
        ),
    ),
    Mutant(
        "a review branch standing on a force-pushed takedown stays to be merged",
        "gitpub/deliver/review.py",
        "        if move is None and not gone:\n",
        "        if False:\n",
        (
            "tests/deliver/test_workflows.py::"
            "test_a_review_branch_standing_on_a_force_pushed_takedown_is_withdrawn_not_merged_back",
        ),
    ),
    Mutant(
        "a stylesheet git merged is taken as the artifact",
        "gitpub/deliver/fontmerge.py",
        "        if _derived_off_manifest(ctx, job):\n",
        "        if False:\n",
        (
            "tests/fonts/test_fonts_chunked.py::"
            "test_two_writers_whose_stylesheet_rules_git_merges_cleanly_both_publish",
        ),
    ),
    Mutant(
        "the Python API runs the jobs alone",
        "gitpub/api.py",
        "        return [j.public() for j in runner.run(self.path, until_idle=True, "
        "concurrency=concurrency)]\n",
        "        from gitpub.context import open_context\n"
        "        from gitpub.ops import worker\n\n"
        "        with open_context(self.path) as ctx:\n"
        "            return [j.public() for j in worker.run_until_idle(ctx)]\n",
        (COMPOSE + "test_the_python_api_runs_the_whole_worker_pass[sqlite]",),
    ),
    Mutant(
        "recovery's moves go unsaid",
        "gitpub/ops/runner.py",
        '                    self._told(ctx, recovered, since="")\n',
        "",
        (COMPOSE + "test_every_state_change_of_the_worker_is_one_line[sqlite]",),
    ),
    Mutant(
        "the web page acts on a POST without its CSRF token",
        "gitpub/ui/app.py",
        "        if not secrets.compare_digest(given.encode(), self.csrf.encode()) or "
        "_cross_site(request):\n",
        "        if False:\n",
        ("tests/ui/test_ui_security.py::test_a_post_without_the_csrf_token_changes_nothing",),
    ),
    Mutant(
        "the web page listens beyond this machine without a token",
        "gitpub/ui/server.py",
        "    if token is None and not is_loopback(host):\n",
        "    if False:\n",
        (
            "tests/ui/test_ui_security.py::test_listening_beyond_loopback_without_a_token_is_refused",
        ),
    ),
    Mutant(
        "the web page prints a text unsanitized",
        "gitpub/ui/app.py",
        "    return sanitize(value) if isinstance(value, str) else value\n",
        "    return value\n",
        ("tests/ui/test_ui_pages.py::test_the_templates_sanitize_whatever_they_print",),
    ),
    Mutant(
        "a remembered source font keeps a removed checkout's path",
        "gitpub/fonts/source.py",
        "        font.path, font.cache = path, {}\n",
        "        pass\n",
        (
            "tests/fonts/test_fonts_publish.py::"
            "test_a_second_job_in_one_process_never_reads_the_first_jobs_removed_checkout",
        ),
    ),
    Mutant(
        "a refused rebase stop left half-done",
        "gitpub/git/rebase.py",
        "        if left:\n            if not person:\n",
        "        if left:\n            if False:\n",
        ("tests/git/test_rebase.py::test_a_refused_stop_aborts_and_leaves_the_branch_untouched",),
    ),
    # The promise model guards the whole promise: each of these breaks one of its
    # invariants, and a walk of the default seeds must find it.
    Mutant(
        "no takedown is ever noticed",
        "gitpub/deliver/withdrawn.py",
        "    looked = _to_look_at(ctx, seen, deleted)\n",
        "    looked: list[Job] = []\n",
        (MODEL + "test_the_promise_holds_on_a_plain_blog[1]", MODEL_FONTS + "[1]"),
    ),
    Mutant(
        "a publication is never confirmed, so pushed again",
        "gitpub/deliver/confirm.py",
        "                found[job.job_id] = _first_with_content(ctx, job, candidates)\n",
        "                pass\n",
        (MODEL + "test_the_promise_holds_on_a_plain_blog[1]", MODEL_FONTS + "[1]"),
    ),
    # The store's URL is a secret (issue 35): every message that can carry it is masked.
    Mutant(
        "the store URL's password shown in its errors",
        "gitpub/store/url.py",
        "    pattern = _secrets_pattern(url) if url else None\n",
        "    return text\n",
        (
            "tests/unit/test_store_url.py::test_libpqs_words_about_an_unencoded_percent_are_masked",
            "tests/store/test_store_url_secret.py::"
            "test_a_store_url_libpq_cannot_use_is_one_line_without_its_password",
        ),
    ),
    # One blog, one schema: its name follows the remote URL as git reads it.
    Mutant(
        "two spellings of one remote get two schemas",
        "gitpub/store/blogs.py",
        '        return f"{remoteurl.normalize(self.remote)}#{self.branch}"\n',
        "        return self.legacy\n",
        (
            "tests/unit/test_remoteurl.py::test_a_blog_is_its_repository_and_its_branch",
            "tests/store/test_blog_schema.py::test_two_spellings_of_one_remote_share_one_store",
        ),
    ),
    Mutant(
        "an upgrade leaves a schema named by the old rule behind",
        "gitpub/store/blogs.py",
        "    if row is not None:\n        return legacy\n",
        "",
        (
            "tests/store/test_blog_schema.py::"
            "test_nodes_whose_store_forked_before_the_upgrade_keep_their_own_jobs",
        ),
    ),
    Mutant(
        "the MCP wire lets a lone surrogate through to the SDK",
        "gitpub/mcpserver/wire.py",
        "    where = surrogate_at(obj)\n",
        "    where = None\n",
        (
            "tests/mcpserver/test_mcp_wire.py::"
            "test_a_lone_surrogate_anywhere_gets_an_answer_naming_it",
        ),
    ),
    Mutant(
        "the MCP wire replaces bytes that are not UTF-8",
        "gitpub/mcpserver/wire.py",
        '        text = line.decode("utf-8")\n',
        '        text = line.decode("utf-8", "replace")\n',
        (
            "tests/mcpserver/test_mcp_wire.py::"
            "test_bytes_that_are_not_utf8_are_refused_never_replaced",
        ),
    ),
    Mutant(
        "a moment before the year 1000 is stored with three digits",
        "gitpub/core/timespec.py",
        "    if not FIRST <= epoch <= LAST:\n",
        "    if False:\n",
        (
            "tests/core/test_times.py::test_a_year_before_1000_is_refused_not_stored_with_three_digits",
        ),
    ),
    Mutant(
        "the similarity index looks up one 3-gram too few to prove an article cannot reach",
        "gitpub/prepare/similarity_index.py",
        "    need = min(n - math.ceil(floor * n) + 1, n) if floor > 0 else n",
        "    need = min(n - math.ceil(floor * n), n) if floor > 0 else n",
        ("tests/prepare/test_similarity_index.py::test_the_index_answers_as_the_whole_blog_does",),
    ),
    Mutant(
        "the font gate on the commit keeps the characters of a removed article version",
        "gitpub/fonts/usedchars.py",
        "            counts.subtract(text_chars(blobs[before]))",
        "            pass",
        ("tests/fonts/test_fonts_treegate.py::test_the_article_characters_follow_the_tree_delta",),
    ),
)

# Promises whose mutant waits for code still being built elsewhere (see docs/testing.md).
PENDING: tuple[str, ...] = ()


def copy_package(dest: Path) -> None:
    """The package as Python will import it, laid out as a wheel installs it: the top-level
    `hooks/` is the package `gitpub.hooktemplates` (pyproject's package-dir), and `hooks`
    beside it names that folder, so a mutant of `hooks/...` changes what the copy imports."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "gitpub", dest / "gitpub", symlinks=False, ignore=ignore)
    shutil.copytree(ROOT / "hooks", dest / "gitpub" / "hooktemplates", ignore=ignore)
    (dest / "hooks").symlink_to(Path("gitpub") / "hooktemplates", target_is_directory=True)


def apply(copy: Path, mutant: Mutant) -> Path:
    path = copy / mutant.file
    if not path.is_file():
        raise SystemExit(f"mutant {mutant.name!r}: {mutant.file} does not exist (update it)")
    text = path.read_text("utf-8")
    found = text.count(mutant.old)
    if found != 1:
        raise SystemExit(
            f"mutant {mutant.name!r}: its snippet occurs {found} times in {mutant.file}, "
            f"not once: the code moved; update the mutant. Snippet:\n{mutant.old}"
        )
    path.write_text(text.replace(mutant.old, mutant.new), "utf-8")
    return path


def pytest_env(copy: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_copy_is_imported(copy: Path) -> None:
    """The copy must win over this tree and over an editable install of it."""
    out = subprocess.run(
        [sys.executable, "-c", "import gitpub; print(gitpub.__file__)"],
        cwd=copy,
        env=pytest_env(copy),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not out.startswith(str(copy)):
        raise SystemExit(f"the package copy is not the one imported: {out}")


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str]:
    """pytest on ROOT's tests against the package in `copy`; stops at the first failure.
    Runs from inside the copy, so `python -m pytest` puts the copy first on sys.path."""
    # One process: the guarding tests are few, and xdist ends a run stopped by -x with exit 2.
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "-rfE"]
    argv += ["-m", ""]  # the tests named run whatever their marker (the model is a soak)
    argv += ["--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")]
    argv += [str(ROOT / t) for t in tests]
    try:
        proc = subprocess.run(
            argv, cwd=copy, env=pytest_env(copy), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout:g}s"
    return proc.returncode, proc.stdout + proc.stderr


FAILED = re.compile(r"^FAILED (\S+)", re.M)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("names", nargs="*", help="run only mutants whose name contains one of these")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per mutant")
    ap.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    ap.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip running the guarding tests on the unmutated copy first",
    )
    args = ap.parse_args()
    chosen = [m for m in MUTANTS if not args.names or any(n in m.name for n in args.names)]
    if args.list:
        for m in chosen:
            print(f"{m.name}\n    {m.file}\n    " + "\n    ".join(m.tests))
        if PENDING:
            print(f"pending: {', '.join(PENDING)}")
        return 0
    if not chosen:
        print("no mutant matches", file=sys.stderr)
        return 2

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gitpub-mutants-") as tmp:
        base = Path(tmp)
        # Every snippet is checked before any test runs: a stale mutant fails in a second.
        probe = base / "probe"
        copy_package(probe)
        for m in chosen:
            apply(probe, m)
            shutil.rmtree(probe)
            copy_package(probe)

        pristine = base / "pristine"
        copy_package(pristine)
        check_copy_is_imported(pristine)
        if not args.no_baseline:
            tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
            code, out = run_tests(pristine, tests, args.timeout * 2)
            if code != 0:
                print(out[-3000:])
                print("baseline: the guarding tests fail WITHOUT any mutant", file=sys.stderr)
                return 1
            print(f"baseline: {len(tests)} guarding tests pass on the unmutated copy")

        def one(index: int, m: Mutant) -> tuple[str, str, str, float]:
            copy = base / f"mutant-{index}"
            copy_package(copy)
            apply(copy, m)
            t0 = time.monotonic()
            code, out = run_tests(copy, m.tests, args.timeout)
            took = time.monotonic() - t0
            shutil.rmtree(copy, ignore_errors=True)
            killers = FAILED.findall(out)
            if code == 1 and killers:
                file, _, test = killers[0].partition("::")
                verdict, by = "killed", f"{Path(file).name}::{test}"
            elif code == 0:
                verdict, by = "SURVIVED", "(every guarding test passed)"
            else:
                verdict, by = "ERROR", f"pytest exit {code}"
                print(out[-2000:])
            print(f"{verdict:8} {took:6.1f}s  {m.name}  <- {by}", flush=True)
            return m.name, verdict, by, took

        # Each mutant in a copy of its own: `--jobs` of them at a time (the machines have
        # two cores; the guarding tests of one mutant run in one process).
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(lambda pair: one(*pair), enumerate(chosen)))

    killed = sum(1 for r in rows if r[1] == "killed")
    print()
    print("| mutant | killed by | time |")
    print("|---|---|---|")
    for name, verdict, by, took in rows:
        mark = f"`{by}`" if verdict == "killed" else f"**{verdict}** {by}"
        print(f"| {name} | {mark} | {took:.0f} s |")
    for name in PENDING:
        print(f"| {name} | pending | |")
    print()
    print(f"{killed}/{len(rows)} mutants killed in {time.monotonic() - started:.0f} s")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
