#!/usr/bin/env bash
# Refreshes the Swagger UI the API reference (/api/v1/ui/) serves from npm's
# swagger-ui-dist: `scripts/update_swagger_ui.sh 5.35.0`. The page itself
# (socialpub/portal/swagger_ui/index.j2) is ours and is kept.
set -euo pipefail
version="${1:?usage: scripts/update_swagger_ui.sh <swagger-ui-dist version>}"
target="$(cd "$(dirname "$0")/.." && pwd)/socialpub/portal/swagger_ui"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "swagger-ui-dist@$version" >/dev/null && tar xzf swagger-ui-dist-*.tgz)
for file in swagger-ui-bundle.js swagger-ui-standalone-preset.js swagger-ui.css favicon-16x16.png favicon-32x32.png \
            oauth2-redirect.html oauth2-redirect.js LICENSE NOTICE; do
  cp "$work/package/$file" "$target/$file"
done
echo "$version" > "$target/VERSION"
echo "Swagger UI $version in $target"
