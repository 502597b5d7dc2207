#!/usr/bin/env bash
# Throw-away TLS material and SCRAM credentials for the broker's secured listeners (SASL_SSL with
# SCRAM, and SSL with a required client certificate), so that every test run exercises TLS and
# SASL against the real broker. Sourced at the end of lib/kafka.sh.
#
# Everything lives in ${KAFKA_DIR}/security (git-ignored) and is made again whenever the broker
# gets fresh storage: a new CA (valid 7 days), a broker certificate for localhost / 127.0.0.1, a
# client certificate for mutual TLS, and random SCRAM passwords. Nothing here is a real secret.
# security.json describes it all for the integration tests (test/support/global-setup.ts).

SECURITY_DIR="${KAFKA_DIR}/security"
# SCRAM users created at format time: one super user, and one with no ACLs at all (the
# authorisation-failure tests use it). The mutual-TLS client's principal is its certificate's DN.
SCRAM_USER="agentops"
SCRAM_LIMITED_USER="agentops-limited"
TLS_CLIENT_DN="CN=agentops-client"

require_openssl() {
  command -v openssl >/dev/null 2>&1 || die "openssl is missing: it makes the throw-away CA for the broker's TLS listeners (apt-get install openssl)."
}

# security_make: a fresh CA, broker and client certificates, and SCRAM passwords.
security_make() {
  require_openssl
  rm -rf "${SECURITY_DIR}"
  mkdir -p "${SECURITY_DIR}"
  chmod 700 "${SECURITY_DIR}"
  local dir="${SECURITY_DIR}" days=7
  (
    cd "${dir}"
    # -noenc keys are PKCS#8 ("BEGIN PRIVATE KEY"), the only unencrypted PEM key form Kafka reads.
    openssl req -x509 -newkey rsa:2048 -noenc -keyout ca-key.pem -out ca.pem -days "${days}" \
      -subj "/CN=agentops throw-away test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey rsa:2048 -noenc -keyout broker-key.pem -out broker.csr -subj "/CN=localhost"
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out broker-cert.pem -days "${days}" -extfile broker.ext
    # Kafka's PEM key store: the private key followed by the certificate chain, in one file.
    cat broker-key.pem broker-cert.pem ca.pem >broker.pem
    openssl req -newkey rsa:2048 -noenc -keyout client-key.pem -out client.csr -subj "/${TLS_CLIENT_DN}"
    printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' >client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out client-cert.pem -days "${days}" -extfile client.ext
    rm -f ./*.csr ./*.ext ca.srl
    head -c 18 /dev/urandom | base64 | tr '+/' '-_' >scram-password
    head -c 18 /dev/urandom | base64 | tr '+/' '-_' >scram-limited-password
    chmod 600 ./*
  ) >"${KAFKA_DIR}/logs/security.log" 2>&1 || {
    cat "${KAFKA_DIR}/logs/security.log" >&2
    die "kafka: making the throw-away TLS material failed (log: ${KAFKA_DIR}/logs/security.log)"
  }
  security_describe
  log "kafka: throw-away CA and certificates in ${SECURITY_DIR} (valid ${days} days), SCRAM users ${SCRAM_USER} and ${SCRAM_LIMITED_USER}"
}

# security.json: where each secured listener is and which files and users reach it.
security_describe() {
  cat >"${SECURITY_DIR}/security.json" <<JSON
{
  "saslSslBrokers": "127.0.0.1:${KAFKA_SASL_SSL_PORT}",
  "mutualTlsBrokers": "127.0.0.1:${KAFKA_SSL_PORT}",
  "caFile": "${SECURITY_DIR}/ca.pem",
  "serverCertFile": "${SECURITY_DIR}/broker-cert.pem",
  "serverKeyFile": "${SECURITY_DIR}/broker-key.pem",
  "clientCertFile": "${SECURITY_DIR}/client-cert.pem",
  "clientKeyFile": "${SECURITY_DIR}/client-key.pem",
  "scramUser": "${SCRAM_USER}",
  "scramPasswordFile": "${SECURITY_DIR}/scram-password",
  "limitedUser": "${SCRAM_LIMITED_USER}",
  "limitedPasswordFile": "${SECURITY_DIR}/scram-limited-password"
}
JSON
}

# security_format_args: the StorageTool arguments that create the SCRAM users at format time.
security_format_args() {
  local password limited mechanism
  password="$(cat "${SECURITY_DIR}/scram-password")"
  limited="$(cat "${SECURITY_DIR}/scram-limited-password")"
  for mechanism in SCRAM-SHA-512 SCRAM-SHA-256; do
    printf '%s\n' --add-scram "${mechanism}=[name=${SCRAM_USER},password=${password}]"
    printf '%s\n' --add-scram "${mechanism}=[name=${SCRAM_LIMITED_USER},password=${limited}]"
  done
}
