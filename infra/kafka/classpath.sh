# Resolves the Kafka broker's classpath (sourced, not run) for infra/kafka/start.sh and
# infra/clusters/kafka: the jars infra/kafka/pom.xml names, fetched by Maven once into a libs
# directory and reused until the pom changes (its hash is kept in libs/.complete).
#
#   source infra/kafka/classpath.sh
#   kafka_classpath <libs dir> <work dir>   # needs say() and fail() from the caller
KAFKA_POM="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pom.xml"

kafka_sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }

# Checks java (11+) and fills <libs dir> with the broker's jars unless it already holds them.
kafka_classpath() { # libs_dir work_dir
  local libs="$1" work="$2" pom_hash java_major
  command -v java >/dev/null 2>&1 ||
    fail "java not found on PATH. Install a JDK or JRE 11+ (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17), or use 'docker compose up kafka'."
  java_major="$(java -version 2>&1 | awk -F'"' '/version/ && !m { split($2, v, "."); m = (v[1] == "1" ? v[2] : v[1]) } END { print m }' || true)"
  [[ "${java_major:-0}" =~ ^[0-9]+$ && "$java_major" -ge 11 ]] ||
    fail "Kafka 3.9 needs Java 11 or later; 'java -version' reports ${java_major:-an unknown version}."

  pom_hash="$(kafka_sha256 "$KAFKA_POM")"
  [[ "$(cat "$libs/.complete" 2>/dev/null || true)" != "$pom_hash" ]] || return 0
  command -v mvn >/dev/null 2>&1 ||
    fail "mvn not found on PATH; it resolves the broker's jars once. Install Maven 3.6+ (Debian/Ubuntu: apt-get install maven; macOS: brew install maven)."
  say "resolving classpath… (Maven, from infra/kafka/pom.xml into $libs)"
  rm -rf "$libs.tmp" "$work/mvn-work"
  mkdir -p "$work/mvn-work"
  # Maven runs on a copy of the pom so that nothing (target/) is written into the repository.
  cp "$KAFKA_POM" "$work/mvn-work/pom.xml"
  if ! mvn -q -B -f "$work/mvn-work/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs.tmp" >"$work/mvn.log" 2>&1; then
    tail -n 40 "$work/mvn.log" >&2 || true
    fail "Maven could not resolve the broker's classpath (full output: $work/mvn.log)"
  fi
  ls "$libs.tmp"/kafka_2.13-*.jar >/dev/null 2>&1 || fail "Maven ran but $libs.tmp has no kafka_2.13 jar"
  rm -rf "$libs" "$work/mvn-work"
  mv "$libs.tmp" "$libs"
  echo "$pom_hash" >"$libs/.complete"
  say "classpath: $(find "$libs" -name '*.jar' | wc -l | tr -d ' ') jars, $(du -sh "$libs" | cut -f1)"
}
