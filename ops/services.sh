#!/usr/bin/env bash
# Local Kafka (KRaft) + Apicurio schema registry for development and the integration tests.
#   ops/services.sh up [--keep-data]   start both (no-op for a service already running)
#   ops/services.sh down               stop both
#   ops/services.sh status             show both; exit 0 only when both are healthy
# Downloads go to .cache/, data, logs, pids and throw-away TLS material to .services/ (both
# git-ignored). AGENTOPS_SERVICES_DIR and AGENTOPS_{KAFKA,KAFKA_CONTROLLER,KAFKA_SASL_SSL,KAFKA_SSL,
# REGISTRY,REGISTRY_MANAGEMENT}_PORT run a second pair next to the default one.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "${HERE}/lib/common.sh"
# shellcheck source=lib/kafka.sh
source "${HERE}/lib/kafka.sh" # and lib/security.sh
# shellcheck source=lib/registry.sh
source "${HERE}/lib/registry.sh"

usage() { sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

command="${1:-}"
shift || true
keep_data=0
for arg in "$@"; do
  case "${arg}" in
    --keep-data) keep_data=1 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown flag '${arg}'. Fix: $(usage | head -1)" ;;
  esac
done

case "${command}" in
  up)
    require_node
    mkdir -p "${CACHE_DIR}" "${SERVICES_DIR}"
    started="$(date +%s)"
    kafka_up "${keep_data}"
    registry_up
    log "all services ready in $(($(date +%s) - started)) s: KAFKA_BROKERS=127.0.0.1:${KAFKA_PORT} SCHEMA_REGISTRY_URL=${REGISTRY_URL}/apis/ccompat/v7"
    log "secured listeners: SASL_SSL (SCRAM) 127.0.0.1:${KAFKA_SASL_SSL_PORT}, mutual TLS 127.0.0.1:${KAFKA_SSL_PORT}; CA, certificates and users: ${SECURITY_DIR}/security.json"
    ;;
  down)
    registry_down
    kafka_down
    ;;
  status)
    rc=0
    kafka_status || rc=1
    registry_status || rc=1
    exit "${rc}"
    ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
