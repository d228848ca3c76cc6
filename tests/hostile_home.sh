#!/usr/bin/env bash
# Run a command (by default the whole suite) with a hostile git configuration in a temporary
# real HOME: signing on with a gpg program that fails, a global core.hooksPath whose hooks
# fail, another init.defaultBranch, no identity, coloured output. The suite must not notice:
# every test runs in its own hermetic HOME, in-process reads included. git speaks German
# (LANGUAGE=de): gitpub must read git in its own fixed locale. Afterwards the hostile
# gpg and hooks must never have been called.
#
#   tests/hostile_home.sh                          # python -m pytest -q
#   tests/hostile_home.sh python -m pytest -q tests/api/test_api.py
set -euo pipefail
[ $# -gt 0 ] || set -- python -m pytest -q

home="$(mktemp -d "${TMPDIR:-/tmp}/gitpub-hostile-home.XXXXXX")"
trap 'rm -rf "$home"' EXIT
calls="$home/called.log"
mkdir -p "$home/hooks" "$home/.config/git"

cat >"$home/gpg" <<EOF
#!/bin/sh
echo "gpg \$*" >>"$calls"
echo "hostile gpg: refusing to sign" >&2
exit 1
EOF
chmod +x "$home/gpg"

for hook in pre-commit prepare-commit-msg commit-msg post-commit post-checkout post-merge \
  post-rewrite pre-rebase pre-push reference-transaction; do
  cat >"$home/hooks/$hook" <<EOF
#!/bin/sh
echo "hook $hook" >>"$calls"
exit 1
EOF
  chmod +x "$home/hooks/$hook"
done

cat >"$home/.gitconfig" <<EOF
[init]
	defaultBranch = hostile-trunk
[commit]
	gpgSign = true
[tag]
	gpgSign = true
[gpg]
	program = $home/gpg
[user]
	useConfigOnly = true
[core]
	hooksPath = $home/hooks
	autocrlf = true
[color]
	ui = always
[log]
	showSignature = true
[pull]
	rebase = false
[push]
	default = nothing
EOF
# The XDG file is read too; give it the same hostility.
cp "$home/.gitconfig" "$home/.config/git/config"

status=0
env -u XDG_CONFIG_HOME -u GIT_CONFIG_GLOBAL -u GIT_CONFIG_NOSYSTEM \
  HOME="$home" GNUPGHOME="$home/.gnupg" LANGUAGE=de "$@" || status=$?

if [ -s "$calls" ]; then
  echo "hostile_home: the hostile configuration was used by the suite:" >&2
  sort "$calls" | uniq -c >&2
  exit 1
fi
exit "$status"
