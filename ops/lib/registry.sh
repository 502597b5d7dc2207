#!/usr/bin/env bash
# Apicurio Registry 3.x (in-memory storage) serving the Confluent-compatible API under
# /apis/ccompat/v7. Sourced by ops/services.sh after lib/common.sh.

REGISTRY_VERSION="${AGENTOPS_REGISTRY_VERSION:-3.3.3}"
REGISTRY_PORT="${AGENTOPS_REGISTRY_PORT:-18081}"
REGISTRY_MANAGEMENT_PORT="${AGENTOPS_REGISTRY_MANAGEMENT_PORT:-18082}"
REGISTRY_URL="http://127.0.0.1:${REGISTRY_PORT}"
REGISTRY_HOME="${CACHE_DIR}/apicurio-registry-${REGISTRY_VERSION}"
REGISTRY_DIR="${SERVICES_DIR}/registry"
REGISTRY_PID="${REGISTRY_DIR}/registry.pid"
REGISTRY_MARKER="-Dagentops.service=registry"
REGISTRY_READY_TIMEOUT_S="${AGENTOPS_REGISTRY_READY_TIMEOUT_S:-240}"

registry_fetch() {
  [[ -f "${REGISTRY_HOME}/.complete" ]] && return 0
  require_maven
  log "registry: downloading io.apicurio:apicurio-registry-app:${REGISTRY_VERSION}:tar.gz:all (~160 MB, first run only)"
  mkdir -p "${REGISTRY_HOME}"
  # -Dtransitive=false: the app POM names repositories that are not reachable from everywhere
  # (e.g. repo.eclipse.org); the tar.gz is self-contained, so only the one artifact is needed.
  if ! mvn -B dependency:get -Dartifact="io.apicurio:apicurio-registry-app:${REGISTRY_VERSION}:tar.gz:all" -Dtransitive=false >"${REGISTRY_HOME}/maven.log" 2>&1; then
    tail -20 "${REGISTRY_HOME}/maven.log" >&2
    die "registry: Maven could not fetch apicurio-registry-app ${REGISTRY_VERSION} (log: ${REGISTRY_HOME}/maven.log)"
  fi
  local repo archive
  repo="$(mvn -B -q help:evaluate -Dexpression=settings.localRepository -DforceStdout 2>/dev/null || true)"
  [[ -n "${repo}" && -d "${repo}" ]] || repo="${HOME}/.m2/repository"
  archive="${repo}/io/apicurio/apicurio-registry-app/${REGISTRY_VERSION}/apicurio-registry-app-${REGISTRY_VERSION}-all.tar.gz"
  [[ -f "${archive}" ]] || die "registry: downloaded archive not found at ${archive}"
  log "registry: unpacking $(du -h "${archive}" | cut -f1) archive"
  rm -rf "${REGISTRY_HOME}/app" && mkdir -p "${REGISTRY_HOME}/app"
  tar -xzf "${archive}" -C "${REGISTRY_HOME}/app"
  local jar
  jar="$(find "${REGISTRY_HOME}/app" -name quarkus-run.jar | head -1)"
  [[ -n "${jar}" ]] || die "registry: quarkus-run.jar not found in the archive"
  printf '%s\n' "${jar}" >"${REGISTRY_HOME}/jar-path"
  touch "${REGISTRY_HOME}/.complete"
}

registry_is_running() { pid_alive "${REGISTRY_PID}" "${REGISTRY_MARKER}"; }

registry_healthy() {
  curl -fsS --max-time 5 -o /dev/null "${REGISTRY_URL}/apis/ccompat/v7/subjects" 2>/dev/null
}

# BACKWARD at the global level: a new version must read data written with the previous one, so
# an incompatible schema change is refused by the registry itself.
registry_set_compatibility() {
  curl -fsS --max-time 10 -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
    --data '{"compatibility":"BACKWARD"}' "${REGISTRY_URL}/apis/ccompat/v7/config" >/dev/null \
    || die "registry: could not set the global compatibility level to BACKWARD"
}

registry_up() {
  if registry_is_running; then
    log "registry: already running (pid $(cat "${REGISTRY_PID}")) at ${REGISTRY_URL}"
    return 0
  fi
  require_port_free "${REGISTRY_PORT}" "schema registry"
  require_port_free "${REGISTRY_MANAGEMENT_PORT}" "schema registry management"
  local java_bin
  java_bin="$(require_java 21 "Apicurio Registry ${REGISTRY_VERSION}")" || exit 1
  registry_fetch
  mkdir -p "${REGISTRY_DIR}/logs"
  local jar started
  jar="$(cat "${REGISTRY_HOME}/jar-path")"
  log "registry: starting Apicurio ${REGISTRY_VERSION} at ${REGISTRY_URL} with ${java_bin}; log ${REGISTRY_DIR}/logs/registry.log"
  started="$(date +%s)"
  local -a cmd=("${java_bin}" -Xms128m -Xmx512m)
  mapfile -t -O 3 cmd < <(jvm_fast_start_flags)
  cmd+=(
    "${REGISTRY_MARKER}"
    -Dquarkus.http.host=127.0.0.1
    "-Dquarkus.http.port=${REGISTRY_PORT}"
    # Quarkus' management interface defaults to 0.0.0.0:9000; keep it on loopback, next to ours.
    -Dquarkus.management.host=127.0.0.1
    "-Dquarkus.management.port=${REGISTRY_MANAGEMENT_PORT}"
    -Dquarkus.log.file.enabled=true
    "-Dquarkus.log.file.path=${REGISTRY_DIR}/logs/registry.log"
    -Dquarkus.log.console.enabled=false
    # Deleting subjects/artifacts is off by default; tests and `schemas` tooling clean up after themselves.
    -Dapicurio.rest.deletion.artifact.enabled=true
    -Dapicurio.rest.deletion.artifact-version.enabled=true
    -Dapicurio.rest.deletion.group.enabled=true
    # Global COMPATIBILITY rule from the first request on (the PUT after start makes it explicit).
    -Dapicurio.rules.global.compatibility=BACKWARD
    -jar "${jar}"
  )
  setsid nohup "${cmd[@]}" >"${REGISTRY_DIR}/logs/stdout.log" 2>&1 </dev/null &
  echo $! >"${REGISTRY_PID}"
  wait_for_service registry "${REGISTRY_PID}" "${started}" "${REGISTRY_READY_TIMEOUT_S}" AGENTOPS_REGISTRY_READY_TIMEOUT_S 3 "${REGISTRY_DIR}/logs" registry_healthy \
    "${REGISTRY_DIR}/logs/stdout.log" "${REGISTRY_DIR}/logs/registry.log"
  registry_set_compatibility
  log "registry: ready after $(($(date +%s) - started)) s (global compatibility BACKWARD)"
}

registry_down() { stop_pid "${REGISTRY_PID}" "${REGISTRY_MARKER}" "registry"; }

registry_status() { service_status registry "${REGISTRY_PID}" "${REGISTRY_URL}" "${REGISTRY_PORT}" registry_is_running registry_healthy; }
