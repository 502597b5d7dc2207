#!/usr/bin/env bash
# Apache Kafka in KRaft mode (one broker+controller) from the broker jars on Maven Central.
# Sourced by ops/services.sh after lib/common.sh.

# 4.4.0 is the newest 4.x line on Central at the time of writing; see docs/operations.md.
KAFKA_VERSION="${AGENTOPS_KAFKA_VERSION:-4.4.0}"
KAFKA_LOG4J_VERSION="2.25.5"
# Ports can be moved (with AGENTOPS_SERVICES_DIR) to run a second broker next to the default one.
KAFKA_PORT="${AGENTOPS_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${AGENTOPS_KAFKA_CONTROLLER_PORT:-19093}"
# Secured listeners (see lib/security.sh): SASL_SSL with SCRAM, and SSL with a client certificate.
KAFKA_SASL_SSL_PORT="${AGENTOPS_KAFKA_SASL_SSL_PORT:-19094}"
KAFKA_SSL_PORT="${AGENTOPS_KAFKA_SSL_PORT:-19095}"
KAFKA_HOME="${CACHE_DIR}/kafka-${KAFKA_VERSION}"
KAFKA_DIR="${SERVICES_DIR}/kafka"
KAFKA_PID="${KAFKA_DIR}/kafka.pid"
KAFKA_MARKER="-Dagentops.service=kafka"
KAFKA_READY_TIMEOUT_S="${AGENTOPS_KAFKA_READY_TIMEOUT_S:-180}"

kafka_fetch() {
  [[ -f "${KAFKA_HOME}/.complete" ]] && return 0
  require_maven
  log "kafka: downloading org.apache.kafka:kafka_2.13:${KAFKA_VERSION} and its dependencies from Maven Central (first run only)"
  mkdir -p "${KAFKA_HOME}"
  # The broker POM brings slf4j-api but no binding and no log4j-core; add the log4j2 binding for
  # the slf4j 1.x API it ships, so the broker's logs reach our file appender.
  cat >"${KAFKA_HOME}/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.agentops</groupId><artifactId>kafka-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>${KAFKA_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>${KAFKA_LOG4J_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>${KAFKA_LOG4J_VERSION}</version></dependency>
  </dependencies>
</project>
POM
  rm -rf "${KAFKA_HOME}/libs"
  if ! mvn -B -q -f "${KAFKA_HOME}/pom.xml" dependency:copy-dependencies -DoutputDirectory="${KAFKA_HOME}/libs" -DincludeScope=runtime >"${KAFKA_HOME}/maven.log" 2>&1; then
    tail -20 "${KAFKA_HOME}/maven.log" >&2
    die "kafka: Maven could not fetch kafka_2.13:${KAFKA_VERSION} (log: ${KAFKA_HOME}/maven.log). Is Maven Central reachable?"
  fi
  touch "${KAFKA_HOME}/.complete"
  log "kafka: $(find "${KAFKA_HOME}/libs" -name '*.jar' | wc -l) jars in ${KAFKA_HOME}/libs"
}

kafka_is_running() { pid_alive "${KAFKA_PID}" "${KAFKA_MARKER}"; }

# kafka_command <main class> [args]: prints the JVM command line, one word per line.
kafka_command() {
  printf '%s\n' "${KAFKA_JAVA}" -Xms128m -Xmx512m
  jvm_fast_start_flags
  printf '%s\n' "${KAFKA_MARKER}" \
    "-Dlog4j2.configurationFile=${OPS_ROOT}/ops/kafka/log4j2.xml" "-Dagentops.kafka.logdir=${KAFKA_DIR}/logs" \
    -cp "${KAFKA_HOME}/libs/*" "$@"
}

kafka_health() {
  "${NODE_BIN}" --disable-warning=TimeoutNegativeWarning "${OPS_ROOT}/ops/kafka-health.ts" "127.0.0.1:${KAFKA_PORT}" "$@"
}

kafka_up() {
  local keep_data="$1"
  if kafka_is_running; then
    log "kafka: already running (pid $(cat "${KAFKA_PID}")) on 127.0.0.1:${KAFKA_PORT}"
    return 0
  fi
  require_port_free "${KAFKA_PORT}" "Kafka broker"
  require_port_free "${KAFKA_CONTROLLER_PORT}" "Kafka controller"
  require_port_free "${KAFKA_SASL_SSL_PORT}" "Kafka SASL_SSL listener"
  require_port_free "${KAFKA_SSL_PORT}" "Kafka mutual-TLS listener"
  KAFKA_JAVA="$(require_java 17 "Kafka ${KAFKA_VERSION}")" || exit 1
  kafka_fetch
  mkdir -p "${KAFKA_DIR}/logs"
  local data="${KAFKA_DIR}/data"
  if [[ "${keep_data}" != "1" ]]; then
    # A fresh log dir each time: tests expect a clean broker, not topics from an earlier run.
    rm -rf "${data}"
  fi
  # Fresh storage gets fresh TLS material and SCRAM users; kept storage keeps the ones it knows.
  if [[ ! -f "${data}/meta.properties" || ! -f "${SECURITY_DIR}/broker.pem" ]]; then
    rm -rf "${data}"
    security_make
  else
    security_describe
  fi
  sed -e "s|@DATA_DIR@|${data}|" -e "s|@SECURITY_DIR@|${SECURITY_DIR}|g" -e "s|@PORT@|${KAFKA_PORT}|g" -e "s|@CONTROLLER_PORT@|${KAFKA_CONTROLLER_PORT}|g" \
    -e "s|@SASL_SSL_PORT@|${KAFKA_SASL_SSL_PORT}|g" -e "s|@SSL_PORT@|${KAFKA_SSL_PORT}|g" -e "s|@SCRAM_USER@|${SCRAM_USER}|g" -e "s|@TLS_CLIENT_DN@|${TLS_CLIENT_DN}|g" \
    "${OPS_ROOT}/ops/kafka/server.properties.template" >"${KAFKA_DIR}/server.properties"
  if [[ ! -f "${data}/meta.properties" ]]; then
    local cluster_id
    # A KRaft cluster id is 16 random bytes in URL-safe base64 without padding. It may start with
    # "-", so it is passed as --cluster-id=ID: as a separate word argparse would take it for a flag.
    cluster_id="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    log "kafka: formatting fresh KRaft storage (cluster ${cluster_id})"
    local -a format_cmd
    local -a scram_args
    mapfile -t scram_args < <(security_format_args)
    mapfile -t format_cmd < <(kafka_command kafka.tools.StorageTool format "--cluster-id=${cluster_id}" -c "${KAFKA_DIR}/server.properties" "${scram_args[@]}")
    if ! "${format_cmd[@]}" >"${KAFKA_DIR}/logs/format.log" 2>&1; then
      cat "${KAFKA_DIR}/logs/format.log" >&2
      die "kafka: formatting the storage failed (log: ${KAFKA_DIR}/logs/format.log)"
    fi
  else
    log "kafka: keeping existing data in ${data}"
  fi
  log "kafka: starting ${KAFKA_VERSION} on 127.0.0.1:${KAFKA_PORT} (controller ${KAFKA_CONTROLLER_PORT}, SASL_SSL ${KAFKA_SASL_SSL_PORT}, mutual TLS ${KAFKA_SSL_PORT}); log ${KAFKA_DIR}/logs/server.log"
  local started
  started="$(date +%s)"
  local -a broker_cmd
  mapfile -t broker_cmd < <(kafka_command kafka.Kafka "${KAFKA_DIR}/server.properties")
  # setsid + closed stdio: the broker outlives the shell (and the test runner) that started it.
  # This shell has no job control, so setsid execs in place and $! is the JVM's pid.
  setsid nohup "${broker_cmd[@]}" >"${KAFKA_DIR}/logs/stdout.log" 2>&1 </dev/null &
  echo $! >"${KAFKA_PID}"
  wait_for_service kafka "${KAFKA_PID}" "${started}" "${KAFKA_READY_TIMEOUT_S}" AGENTOPS_KAFKA_READY_TIMEOUT_S 2 "${KAFKA_DIR}/logs" kafka_ready \
    "${KAFKA_DIR}/logs/stdout.log" "${KAFKA_DIR}/logs/server.log"
  log "kafka: ready after $(($(date +%s) - started)) s"
}

kafka_down() { stop_pid "${KAFKA_PID}" "${KAFKA_MARKER}" "kafka"; }

kafka_ready() { port_listening "${KAFKA_PORT}" && kafka_health --quiet; }

kafka_status() { service_status kafka "${KAFKA_PID}" "127.0.0.1:${KAFKA_PORT}" "${KAFKA_PORT}" kafka_is_running kafka_health; }

# The secured listeners' material (needs KAFKA_DIR above); sourced here so that every script that
# sources kafka.sh (ops/services.sh, the broker-restart test) can start the broker.
# shellcheck source=security.sh
source "$(dirname "${BASH_SOURCE[0]}")/security.sh"
