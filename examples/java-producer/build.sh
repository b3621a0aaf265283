#!/usr/bin/env bash
# Builds the Java producer for the tests and CI (tests/system/src/java-producer.int.spec.ts, .ci/run)
# without writing into the repository: Maven runs on a copy of pom.xml and src/ in the output
# directory, with its usual local repository (~/.m2), so Maven Central is reached only for what is
# not there yet (the first build). The build is reused until pom.xml or a source file changes (its
# hash is kept in <out>/.complete). Prints the runnable jar's path on its last line.
#
#   bash examples/java-producer/build.sh [OUT_DIR]    # default <repo>/.tmp/java-producer
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$REPO/.tmp/java-producer}"

say() { echo "[java-producer] $*" >&2; }
fail() {
  echo "[java-producer] error: $*" >&2
  exit 1
}

command -v java >/dev/null 2>&1 ||
  fail "java not found on PATH. Install a JDK 17+ (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless; macOS: brew install openjdk@17)."
command -v mvn >/dev/null 2>&1 ||
  fail "mvn not found on PATH. Install Maven 3.6+ (Debian/Ubuntu: apt-get install maven; macOS: brew install maven)."

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
JAR="$OUT/dist/baton-java-producer.jar"

# Two builds at once (CI's prefetch and a spec) must not write one directory together.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$OUT/build.lock"
  flock -w 600 9 || fail "another build holds $OUT/build.lock"
fi

sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi | cut -d' ' -f1; }
# The hash of everything the build reads, in a fixed order.
HASH="$(cd "$HERE" && find pom.xml src -type f | LC_ALL=C sort | while IFS= read -r f; do
  printf '%s\n' "$f"
  cat "$f"
done | sha256)"

if [[ -f "$JAR" && "$(cat "$OUT/.complete" 2>/dev/null || true)" == "$HASH" ]]; then
  echo "$JAR"
  exit 0
fi

say "building with Maven… (log: $OUT/mvn.log)"
T0=$SECONDS
rm -rf "$OUT/work" "$OUT/dist" "$OUT/.complete"
mkdir -p "$OUT/work"
cp -R "$HERE/pom.xml" "$HERE/src" "$OUT/work/"
if ! mvn -q -B -f "$OUT/work/pom.xml" package >"$OUT/mvn.log" 2>&1; then
  tail -n 40 "$OUT/mvn.log" >&2 || true
  fail "the Maven build failed (full output: $OUT/mvn.log)"
fi
[[ -f "$OUT/work/target/baton-java-producer.jar" ]] || fail "Maven ran but made no target/baton-java-producer.jar"
mv "$OUT/work/target" "$OUT/dist"
rm -rf "$OUT/work"
echo "$HASH" >"$OUT/.complete"
say "built in $((SECONDS - T0)) s: $(find "$OUT/dist/lib" -name '*.jar' | wc -l | tr -d ' ') libraries"
echo "$JAR"
