#!/usr/bin/env bash
# Generates the resolver API's Swift code (types, server, client) from
# Modules/ResolverAPI/openapi.yaml and openapi-generator-config.yaml into
# Modules/ResolverAPI/GeneratedSources, with swift-openapi-generator's command plugin (its
# "ahead of time" way). The generated files are committed: the ResolverAPI target has no build
# plugin, so an app that depends on us does not compile the generator (OpenAPIKit, Yams...).
# Usage:
#   Tools/scripts/openapi-generate.sh           # write the files; commit what changed
#   Tools/scripts/openapi-generate.sh --check   # regenerate, fail if the files were stale (CI)
# The folder is emptied first, so a file the generator no longer writes goes too. The first run
# builds the generator (about 2 min on 2 cores); later runs reuse .build (about 25 s).
set -euo pipefail
cd "$(dirname "$0")/../.."

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

folder=Modules/ResolverAPI/GeneratedSources
before=$(mktemp -d /tmp/openapi-generate.XXXXXX)
trap 'rm -rf "$before"' EXIT
if [ -d "$folder" ]; then cp -a "$folder/." "$before/"; fi

rm -rf "$folder"
# No prompt (stdin may be closed, as in CI): the permission to write is given here. The
# variable keeps openapi.yaml and its configuration among the target's files, where the plugin
# looks for them (Package.swift excludes them otherwise).
if ! NEARBY_OPENAPI_GENERATE=1 swift package --allow-writing-to-package-directory \
  generate-code-from-openapi --target ResolverAPI </dev/null; then
  rm -rf "$folder"
  mkdir -p "$folder"
  cp -a "$before/." "$folder/"
  echo "error: the generator failed (above); $folder is as it was." >&2
  exit 1
fi

# The generator writes `public import` for every import, and Swift 6.3 warns of each one a
# file does not use in a public declaration (250 warnings in a newcomer's first build). The
# target builds without InternalImportsByDefault, so a plain `import` is public: the same
# meaning, and no warning.
sed -i -E 's/^(@_spi\(Generated\) )?public import /\1import /' "$folder"/*.swift

if $check; then
  if ! diff -ru "$before" "$folder" >&2; then
    echo "error: $folder was stale: it does not match openapi.yaml and" \
      "openapi-generator-config.yaml (diff above; it is regenerated now)." \
      "Fix: run Tools/scripts/openapi-generate.sh and commit $folder." >&2
    exit 1
  fi
  echo "$folder matches openapi.yaml." >&2
fi
