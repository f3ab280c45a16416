#!/usr/bin/env bash
# Builds the swapstream.jar of an earlier release from its commit, for the upgrade tests and their
# fixtures: scripts/release-jar.sh 0.1.0 [OUT.jar]. The releases and their commits: docs/upgrading.md.
set -euo pipefail
release=${1:?usage: release-jar.sh RELEASE [OUT.jar]}
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(sed -n "s/^| $release | \`\([0-9a-f]*\)\`.*/\1/p" "$repo/docs/upgrading.md")
[ -n "$commit" ] || { echo "release-jar.sh: no release $release in docs/upgrading.md" >&2; exit 2; }
out=${2:-$repo/target/releases/swapstream-$release.jar}
[ -f "$out" ] && { echo "$out"; exit 0; }
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add -q --detach "$work/src" "$commit"
# its own tests ran when it was released; the registry is not needed to build it
(cd "$work/src" && mvn -B -ntp -q -Dstyle.color=never package -DskipTests -Dregistry.skip -pl cli -am >&2)
mkdir -p "$(dirname "$out")"
cp "$work/src/cli/target/swapstream.jar" "$out"
echo "$out"
