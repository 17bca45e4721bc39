#!/usr/bin/env bash
# A new user on a cluster node, without root: an account with no sudo builds fusetrain against the system
# packages already there, installs it into a prefix, loads the generated module with Lmod and trains the
# quickstart on 2 ranks from a folder outside the clone (cluster_user_steps.sh, which it runs as that account).
#
# Root only: it creates the account (FT_TEST_USER, default fusetrain-user; kept for later runs) and works in a
# private mount namespace; skipped (77) otherwise, or without Lmod, unshare or Fashion-MNIST. That account
# cannot read root's home (mode 700), where the build's LibTorch (the venv) and compiler cache live. So that it
# compiles with the same paths, and so hits the same compiler-cache entries, as this build tree's own build did
# (seconds, not the 10 minutes of a cold build), a mode-755 tmpfs covers root's home in that namespace only and
# read-only binds put back the venv, its Python and the compiler cache at their own paths: the account reads
# them and can change nothing. Nothing is downloaded; the account's own files live in a folder under /tmp.
# Environment (tests/install/CMakeLists.txt): FUSETRAIN_SOURCE, FUSETRAIN_BUILD (this build tree),
# FUSETRAIN_PYTHON (the venv's Python, whose torch the build used), FT_YAML_CPP_DIR (where yaml-cpp was found).
set -euo pipefail
: "${FUSETRAIN_SOURCE:?}" "${FUSETRAIN_BUILD:?}" "${FUSETRAIN_PYTHON:?}" "${FT_YAML_CPP_DIR:?}"
user=${FT_TEST_USER:-fusetrain-user}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (it creates an account and a mount namespace)"
for tool in useradd unshare setpriv git ccache; do command -v "$tool" > /dev/null || skip "$tool not found"; done
git -C "$FUSETRAIN_SOURCE" rev-parse --git-dir > /dev/null 2>&1 ||
  skip "$FUSETRAIN_SOURCE is not a git checkout (the account's clone takes the files git lists)"
[ -f /usr/share/lmod/lmod/init/bash ] || skip "Lmod not installed (tools/setup.sh installs Debian's lmod)"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || skip "dataset-fashion-mnist not installed"
venv=$(cd "$(dirname "$FUSETRAIN_PYTHON")/.." 2> /dev/null && pwd) && [ -f "$venv/pyvenv.cfg" ] ||
  skip "LibTorch does not come from a virtual environment here (FUSETRAIN_PYTHON=$FUSETRAIN_PYTHON)"
python_home=$(sed -n 's/^home *= *//p' "$venv/pyvenv.cfg")
# The compiler cache the build filled: the Makefile's (CCACHE_DIR, default $FUSETRAIN_CACHE/ccache). A build run
# with another CCACHE_DIR leaves this one cold, and the account's build then takes minutes, not seconds.
ccache_dir=${CCACHE_DIR:-${FUSETRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusetrain}/ccache}
[ -x "$FUSETRAIN_BUILD/bin/fusetrain" ] ||
  skip "build fusetrain first: its compiler-cache entries make the account's build take seconds, not minutes"
commit=$(sed -n 's/.*git_commit() { return "\(.*\)"; }.*/\1/p' "$FUSETRAIN_BUILD/src/version.cpp")

flock /tmp/fusetrain-test-user.lock sh -c "id -u '$user' > /dev/null 2>&1 ||
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /bin/bash '$user'"
work=$(mktemp -d /tmp/fusetrain-cluster-user.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The clone the account builds: the checkout's files as they are (tracked, and untracked ones git does not ignore).
mkdir -p "$work/src" "$work/home" "$work/run"
git -C "$FUSETRAIN_SOURCE" ls-files -z --cached --others --exclude-standard |
  tar -C "$FUSETRAIN_SOURCE" --null -T - --ignore-failed-read -cf - 2> /dev/null | tar -C "$work/src" -xf -
cp "$(dirname "$0")/cluster_user_steps.sh" "$work/steps.sh"
chown -R "$user:" "$work"
chmod 755 "$work"

# What the account reads from root's home, bound back at the same paths inside the namespace.
root_home=$(getent passwd 0 | cut -d: -f6)
binds=()
for path in "$venv" "$(dirname "$python_home")" "$ccache_dir"; do
  case $path in "$root_home"/*) binds+=("${path#"$root_home"/}") ;; esac
done

# The account's environment: a login shell's (Lmod's profile script defines `module`), with this build's locale
# and include variables, which the compiler cache keys on, and the compiler cache read-only.
vars=(HOME="$work/home" USER="$user" LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin SHELL=/bin/bash
      FT_WORK="$work" FT_COMMIT="$commit" FT_YAML_CPP_DIR="$FT_YAML_CPP_DIR"
      FUSETRAIN_VENV="$venv" CCACHE_DIR="$ccache_dir" CCACHE_READONLY=1 CCACHE_TEMPDIR="$work/ccache-tmp")
for var in LANG LC_ALL LC_CTYPE LC_MESSAGES CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH; do
  [ -z "${!var:-}" ] || vars+=("$var=${!var}")
done

# In the namespace, as root: root's home becomes a tmpfs holding only the binds; then the account's login shell.
inner='
set -euo pipefail
root_home=$1 user=$2 count=$3
shift 3
stash=$(mktemp -d /run/fusetrain-home.XXXXXX)
mount --bind "$root_home" "$stash"
mount -t tmpfs -o mode=755 tmpfs "$root_home"
for path in "${@:1:count}"; do
  mkdir -p "$root_home/$path"
  mount --bind -o ro "$stash/$path" "$root_home/$path"
done
umount -l "$stash"
shift "$count"
exec setpriv --reuid "$user" --regid "$user" --init-groups env -i "$@" bash -l "${FT_STEPS:?}" < /dev/null'
FT_STEPS=$work/steps.sh unshare --mount --propagation private \
  bash -c "$inner" namespace "$root_home" "$user" "${#binds[@]}" "${binds[@]}" "${vars[@]}"
