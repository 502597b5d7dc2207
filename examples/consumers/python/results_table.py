#!/usr/bin/python3
"""Reads agentops-stream's compacted results topic into a table (docs/consumers.md).

Runs on Debian's python3 with the system packages python3-confluent-kafka (librdkafka) and
python3-avro. Keys are UTF-8 strings (canonical JSON of metric_id, scope and cohort); values are
Avro agentops.v1.MetricResult records in the Confluent wire format: a 0 byte, the schema id as a
4-byte big-endian integer, then the Avro binary body. The writer schema is fetched once per id
from the registry's Confluent-compatible API (GET /schemas/ids/{id}). A record with a null value
is a tombstone: the key no longer exists.

Prints one tab-separated line per live result: key, metric_id, scope, cohort, status, value,
as_of. Exit codes: 0 done, 1 failure (named on stderr), 2 bad arguments.
"""

import argparse
import base64
import datetime
import io
import json
import os
import sys
import time
import urllib.error
import urllib.request

import avro.io
import avro.schema
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

MAGIC_BYTE = 0


class ConsumerError(Exception):
    """A failure to report in one line, without a stack trace."""


class WriterSchemas:
    """Writer schemas by registry id, fetched on first use from the Confluent-compatible API."""

    def __init__(self, registry_url, username=None, password=None):
        self.registry_url = registry_url.rstrip("/")
        self.headers = {"Accept": "application/vnd.schemaregistry.v1+json"}
        if username:
            token = base64.b64encode(f"{username}:{password or ''}".encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"
        self.by_id = {}

    def get(self, schema_id):
        if schema_id not in self.by_id:
            url = f"{self.registry_url}/schemas/ids/{schema_id}"
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=self.headers), timeout=30) as response:
                    body = json.load(response)
            except urllib.error.HTTPError as error:
                raise ConsumerError(f"registry answered {error.code} for {url}: is --registry the Confluent-compatible root (Apicurio: .../apis/ccompat/v7)?") from None
            except urllib.error.URLError as error:
                raise ConsumerError(f"registry unreachable at {url}: {error.reason}") from None
            self.by_id[schema_id] = avro.io.DatumReader(avro.schema.parse(body["schema"]))
        return self.by_id[schema_id]

    def decode(self, payload, where):
        if len(payload) < 5 or payload[0] != MAGIC_BYTE:
            raise ConsumerError(f"{where}: not the Confluent wire format (first byte {payload[:1].hex() or 'none'}, expected 00)")
        reader = self.get(int.from_bytes(payload[1:5], "big"))
        return reader.read(avro.io.BinaryDecoder(io.BytesIO(payload[5:])))


def read_latest(config, topic, schemas, timeout_s):
    """Latest decoded value per key, from the beginning to the end offsets seen at start."""
    consumer = Consumer(config)
    try:
        metadata = consumer.list_topics(topic, timeout=timeout_s)
        described = metadata.topics.get(topic)
        if described is None or described.error is not None or not described.partitions:
            raise ConsumerError(f"topic {topic} not found on {config['bootstrap.servers']}")
        ends = {}
        for partition in described.partitions:
            _low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_s)
            ends[partition] = high
        remaining = {partition for partition, end in ends.items() if end > 0}
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING) for partition in ends])
        latest = {}
        deadline = time.monotonic() + timeout_s
        while remaining:
            if time.monotonic() > deadline:
                raise ConsumerError(f"did not reach the end of {topic} within {timeout_s} s")
            message = consumer.poll(0.5)
            if message is not None:
                if message.error() is not None:
                    raise ConsumerError(f"{topic}: {message.error()}")
                partition, offset = message.partition(), message.offset()
                if offset < ends[partition] and message.key() is not None:
                    key = message.key().decode("utf-8")
                    if message.value() is None:
                        latest.pop(key, None)
                    else:
                        latest[key] = schemas.decode(message.value(), f"{topic}/{partition}@{offset}")
            # Done with a partition once its position (next offset to read) reaches the end seen at
            # start; positions, not the last offset seen, since compaction leaves gaps.
            for position in consumer.position([TopicPartition(topic, partition) for partition in remaining]):
                if position.offset >= ends[position.partition]:
                    remaining.discard(position.partition)
        return latest
    finally:
        consumer.close()


def iso_millis(value):
    """timestamp-millis: python3-avro returns an aware datetime (UTC); plain ints are epoch millis."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        value = value.astimezone(datetime.timezone.utc)
    else:
        value = datetime.datetime.fromtimestamp(value / 1000, tz=datetime.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def scope_of(scope):
    """The scope union decodes to the branch's fields alone (no branch name): `kind` tells which."""
    if scope["kind"] == "window":
        return {"end": iso_millis(scope["end"]), "kind": "window", "start": iso_millis(scope["start"])}
    return {"cutoff": iso_millis(scope["cutoff"]), "kind": "snapshot", "snapshot_id": scope["snapshot_id"]}


def whole_numbers_plain(value):
    """Doubles with no fraction print as 112, not 112.0, as JSON.stringify and the Java example do."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if isinstance(value, dict):
        return {name: whole_numbers_plain(item) for name, item in value.items()}
    return value


def cell(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def print_table(latest, out):
    out.write("key\tmetric_id\tscope\tcohort\tstatus\tvalue\tas_of\n")
    # The order `agentops results` prints: by the keys' UTF-8 bytes.
    for key in sorted(latest, key=lambda text: text.encode("utf-8")):
        result = latest[key]
        row = [key, result["metric_id"], cell(scope_of(result["scope"])), cell(result["cohort"]), result["status"], cell(whole_numbers_plain(result["value"])), cell(iso_millis(result["as_of"]))]
        out.write("\t".join(row) + "\n")


def load_properties(path):
    """librdkafka properties (security.protocol, sasl.*, ssl.*) as key=value lines; # comments."""
    properties = {}
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            line = line.strip()
            if line == "" or line.startswith("#"):
                continue
            if "=" not in line:
                raise ConsumerError(f"{path}:{number}: expected key=value, got {line!r}")
            name, value = line.split("=", 1)
            properties[name.strip()] = value.strip()
    return properties


def main(argv):
    parser = argparse.ArgumentParser(description="Print the latest agentops-stream metric results as a tab-separated table.")
    parser.add_argument("--brokers", default=os.environ.get("KAFKA_BROKERS") or "127.0.0.1:19092", help="bootstrap servers (env KAFKA_BROKERS)")
    parser.add_argument("--registry", default=os.environ.get("SCHEMA_REGISTRY_URL") or "http://127.0.0.1:18081/apis/ccompat/v7", help="Confluent-compatible registry root (env SCHEMA_REGISTRY_URL)")
    parser.add_argument("--topic", default=os.environ.get("RESULTS_TOPIC") or "agentops.metric-results.v1", help="results topic (env RESULTS_TOPIC)")
    parser.add_argument("--config", help="a librdkafka properties file merged in (security.protocol, sasl.*, ssl.*)")
    parser.add_argument("--timeout-seconds", type=float, default=60.0, help="give up reading to the end after this long")
    args = parser.parse_args(argv)

    config = load_properties(args.config) if args.config else {}
    # The client wants a group.id, but assign() joins no group and nothing is committed: the table
    # is a snapshot read.
    config.update({"bootstrap.servers": args.brokers, "client.id": "agentops-results-table-python", "group.id": "agentops-results-table-python", "enable.auto.commit": False, "enable.partition.eof": False})
    schemas = WriterSchemas(args.registry, os.environ.get("SCHEMA_REGISTRY_USERNAME"), os.environ.get("SCHEMA_REGISTRY_PASSWORD"))
    try:
        latest = read_latest(config, args.topic, schemas, args.timeout_seconds)
    except (ConsumerError, KafkaException) as error:
        print(f"results_table: {error}", file=sys.stderr)
        return 1
    print_table(latest, sys.stdout)
    print(f"{len(latest)} results on {args.topic}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
