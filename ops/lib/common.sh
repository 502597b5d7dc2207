#!/usr/bin/env bash
# Shared paths and helpers for the local services. Sourced by ops/services.sh, never run alone.

OPS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE_DIR="${OPS_ROOT}/.cache" # downloads (git-ignored), kept between runs
# Data, logs, pid files and the throw-away TLS material (git-ignored). AGENTOPS_SERVICES_DIR runs a
# second, independent pair of services (with other AGENTOPS_*_PORT values) next to the default one.
SERVICES_DIR="${AGENTOPS_SERVICES_DIR:-${OPS_ROOT}/.services}"
[[ "${SERVICES_DIR}" = /* ]] || SERVICES_DIR="${OPS_ROOT}/${SERVICES_DIR}"
NODE_BIN="${OPS_ROOT}/node_modules/.bin/node"

log() { printf '[services] %s\n' "$*" >&2; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

java_major() {
  "$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}' | cut -d. -f1
}

# find_java <minimum major>: prints the path of a java binary of at least that version, looking
# at JAVA_HOME, the java on PATH, then every JDK under /usr/lib/jvm (newest first). Kafka 4.x
# runs on 17+, but Apicurio 3.3 is compiled for Java 21, which is rarely the system default.
find_java() {
  local minimum="$1" candidate major
  local -a candidates=()
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("${JAVA_HOME}/bin/java")
  command -v java >/dev/null 2>&1 && candidates+=("$(command -v java)")
  while IFS= read -r candidate; do candidates+=("${candidate}"); done < <(ls -d /usr/lib/jvm/*/bin/java 2>/dev/null | sort -rV)
  for candidate in "${candidates[@]}"; do
    [[ -x "${candidate}" ]] || continue
    major="$(java_major "${candidate}")"
    if [[ -n "${major}" && "${major}" -ge "${minimum}" ]]; then
      printf '%s\n' "${candidate}"
      return 0
    fi
  done
  return 1
}

require_java() {
  local minimum="$1" purpose="$2"
  find_java "${minimum}" || die "Java ${minimum} or newer is missing (needed for ${purpose}): install a JDK ${minimum}+ and set JAVA_HOME to it, or point KAFKA_BROKERS/SCHEMA_REGISTRY_URL at running services."
}

require_maven() {
  command -v mvn >/dev/null 2>&1 || die "Maven is missing: it downloads the Kafka and Apicurio jars from Maven Central (apt-get install maven)."
}

require_node() {
  [[ -x "${NODE_BIN}" ]] || die "node_modules/.bin/node is missing: run 'npm ci' first (the health check uses kafkajs)."
}

# pid_alive <pidfile> <marker>: true when the pid in the file runs and its command line carries
# our marker, so a recycled pid that now belongs to another program is never mistaken for ours.
pid_alive() {
  local pidfile="$1" marker="$2" pid
  [[ -f "${pidfile}" ]] || return 1
  pid="$(cat "${pidfile}")"
  [[ -n "${pid}" ]] && kill -0 "${pid}" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -q -- "${marker}"
}

port_listening() {
  ss -ltnH "sport = :$1" 2>/dev/null | grep -q .
}

# A port that listens while our service is not running belongs to someone else: name it and stop.
require_port_free() {
  local port="$1" what="$2"
  if port_listening "${port}"; then
    local owner
    owner="$(ss -ltnpH "sport = :${port}" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\).*/\1/p' | head -1)"
    die "port ${port} (${what}) is already in use by another program ${owner:+(${owner})}; stop it, or point the tests at your own services with KAFKA_BROKERS / SCHEMA_REGISTRY_URL."
  fi
}

# stop_pid <pidfile> <marker> <name>: SIGTERM, wait up to 60 s for a clean shutdown, then SIGKILL.
stop_pid() {
  local pidfile="$1" marker="$2" name="$3" pid i
  if ! pid_alive "${pidfile}" "${marker}"; then
    rm -f "${pidfile}"
    log "${name}: not running"
    return 0
  fi
  pid="$(cat "${pidfile}")"
  log "${name}: stopping (pid ${pid})"
  kill -TERM "${pid}" 2>/dev/null || true
  for ((i = 0; i < 120; i++)); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "${pid}" 2>/dev/null; then
    log "${name}: did not stop within 60 s, killing"
    kill -KILL "${pid}" 2>/dev/null || true
  fi
  rm -f "${pidfile}"
  log "${name}: stopped"
}

# wait_for_service <name> <pidfile> <started epoch s> <timeout s> <timeout env var> <poll s> <log dir>
#                  <ready command> [log files to show if the process dies...]
# Polls the ready command until it succeeds; dies with the logs' tail if the process exits, or
# naming the variable that raises the timeout if it takes too long.
wait_for_service() {
  local name="$1" pidfile="$2" started="$3" timeout_s="$4" timeout_var="$5" poll_s="$6" log_dir="$7" ready="$8"
  shift 8
  local deadline=$((started + timeout_s))
  until "${ready}"; do
    if ! kill -0 "$(cat "${pidfile}")" 2>/dev/null; then
      tail -30 "$@" >&2 2>/dev/null || true
      die "${name}: the process exited during start (logs: ${log_dir}/)"
    fi
    if (($(date +%s) >= deadline)); then
      die "${name}: not ready after ${timeout_s} s (logs: ${log_dir}/); raise ${timeout_var} on a slow machine"
    fi
    log "${name}: waiting ($(($(date +%s) - started)) s)"
    sleep "${poll_s}"
  done
}

# service_status <name> <pidfile> <address> <port> <running command> <healthy command>
# One status line; exit status 0 only for a service of ours that is running and healthy.
service_status() {
  local name="$1" pidfile="$2" address="$3" port="$4" running="$5" healthy="$6"
  if "${running}"; then
    if "${healthy}"; then
      printf '%-9s running  pid %s  %s  healthy\n' "${name}" "$(cat "${pidfile}")" "${address}"
    else
      printf '%-9s running  pid %s  %s  NOT answering\n' "${name}" "$(cat "${pidfile}")" "${address}"
      return 1
    fi
  elif port_listening "${port}"; then
    printf '%-9s foreign  port %s is used by a process not started by ops/\n' "${name}" "${port}"
    return 1
  else
    printf '%-9s stopped\n' "${name}"
    return 1
  fi
}

# Common JVM flags: bounded heap, and a fast start over peak throughput (two JVMs share 2 cores).
jvm_fast_start_flags() {
  printf '%s\n' -XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -XX:MaxMetaspaceSize=256m -Djava.awt.headless=true
}
