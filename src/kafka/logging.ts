import type { logCreator, LogEntry } from "kafkajs";
import type { Logger } from "pino";
import { logLevel } from "./kafkajs.ts";

/**
 * Routes kafkajs' own log lines into pino, so a service emits one structured log stream. kafkajs
 * logs broker addresses and client ids, never credentials (SASL settings are not logged by it).
 */
export function pinoLogCreator(logger: Logger): logCreator {
  return () => (entry: LogEntry) => {
    const { message, ...fields } = entry.log;
    const bindings = { ...fields, kafkajs: entry.namespace };
    switch (entry.level) {
      case logLevel.ERROR:
        logger.error(bindings, message);
        break;
      case logLevel.WARN:
        logger.warn(bindings, message);
        break;
      case logLevel.INFO:
        logger.info(bindings, message);
        break;
      default:
        logger.debug(bindings, message);
    }
  };
}
