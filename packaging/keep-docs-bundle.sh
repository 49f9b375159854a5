#!/bin/sh
# Copies, of an installed @scalar/api-reference, what the server uses: the package.json and
# entry point that openapi/docs-page.ts resolves the package by, and the standalone bundle beside
# it that /api/docs/scalar.js serves. build-image.sh keeps only these (4 MB) and drops the rest
# of the package and its dependencies, which only a browser build of Scalar would load.
#   packaging/keep-docs-bundle.sh <installed package dir> <destination dir>
set -eu
from=$1
to=$2
main=$(cd "$from" && node -p 'require("./package.json").main')
mkdir -p "$to/$(dirname "$main")" "$to/dist/browser"
cp "$from/package.json" "$to/package.json"
cp "$from/$main" "$to/$main"
cp "$from/dist/browser/standalone.js" "$to/dist/browser/standalone.js"
