#!/bin/sh
# Builds the service's container image with podman, from Debian's packages only:
#   packaging/build-image.sh [image tag]       (default localhost/media-storage:latest)
# 1. a Debian bookworm base made with debootstrap (once; kept as localhost/media-base:bookworm);
# 2. the app: the repository's tracked files without tests and benchmarks, its production
#    dependencies from the lockfile (npm ci --omit=dev, or npm install), of @scalar/api-reference
#    only the bundle the docs page serves, and Bun from this checkout's node_modules (run
#    `npm install` first: Bun is a dev dependency, so a production install leaves it out);
# 3. podman build with packaging/Containerfile, in Docker's format (the OCI format drops HEALTHCHECK).
# It prints the size of what it put in /app. Environment: DEBIAN_MIRROR, WORK_DIR, PODMAN
# (default "podman"; e.g. "podman --runtime runc" where crun cannot run containers).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tag=${1:-localhost/media-storage:latest}
work=${WORK_DIR:-$root/.data/image-build}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
podman=${PODMAN:-podman}
base=localhost/media-base:bookworm

if ! $podman image exists "$base"; then
  rm -rf "$work/rootfs"
  mkdir -p "$work"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$mirror"
  # debootstrap leaves the packages it installed and apt's lists behind (about 80 MB); the image
  # installs nothing later, so they go.
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | $podman import --change 'CMD ["/bin/sh"]' - "$base"
  rm -rf "$work/rootfs"
fi

ctx="$work/context"
rm -rf "$ctx"
mkdir -p "$ctx/app"
git -C "$root" ls-files -z | grep -zv -e '^test/' -e '^bench/' -e '^\.ci/' | (cd "$root" && xargs -0 tar -c) | tar -C "$ctx/app" -x
# npm ci refuses a lockfile that lacks optional platform packages the registry does not have
# (as .ci/run notes); npm install still honours the lockfile's versions.
(cd "$ctx/app" && { npm ci --omit=dev --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --omit=dev --no-audit --no-fund --loglevel=error; })
# The docs page serves one file of @scalar/api-reference (keep-docs-bundle.sh); the rest of the
# package and what it depends on (Vue, icon sets, an AI chat client: about 270 MB) never loads.
scalar="$ctx/app/node_modules/@scalar/api-reference"
rm -rf "$work/scalar-keep"
"$root/packaging/keep-docs-bundle.sh" "$scalar" "$work/scalar-keep"
(cd "$ctx/app" && npm uninstall --no-save --omit=dev --no-audit --no-fund --loglevel=error @scalar/api-reference)
mkdir -p "$ctx/app/node_modules/@scalar"
rm -rf "$scalar"
mv "$work/scalar-keep" "$scalar"
# TypeScript (30 MB) stays in a production install as an optional peer of Elysia that the lockfile
# has for the repository's own typecheck; nothing loads it at run time (Bun strips types itself).
rm -rf "$ctx/app/node_modules/typescript" "$ctx/app/node_modules/@typescript"
# npm installs the dependencies of a file: dev dependency (the test clients) even with --omit=dev.
rm -rf "$ctx/app/test"
if [ ! -x "$root/node_modules/bun/bin/bun.exe" ]; then
  echo "build-image.sh: node_modules/bun is missing: run npm install first" >&2
  exit 1
fi
cp -a "$root/node_modules/bun" "$ctx/app/node_modules/bun"
cp "$root/packaging/Containerfile" "$ctx/Containerfile"

echo "build-image.sh: /app holds $(du -sh "$ctx/app" | cut -f1) (node_modules $(du -sh "$ctx/app/node_modules" | cut -f1), Bun $(du -sh "$ctx/app/node_modules/bun" | cut -f1))"
$podman build --format docker --ulimit nofile=1024:4096 --ulimit nproc=1024:4096 \
  --build-arg "BASE=$base" \
  -t "$tag" -f "$ctx/Containerfile" "$ctx"
echo "built $tag ($($podman image inspect "$tag" --format '{{.Size}}') bytes)"
