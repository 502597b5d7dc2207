// What the integration globalSetup hands to every test through vitest's provide/inject.
declare module "vitest" {
  export interface ProvidedContext {
    /** Comma-separated host:port list. */
    kafkaBrokers: string;
    /** Root of the Confluent-compatible schema registry API. */
    schemaRegistryUrl: string;
    /** Where the services came from: "env", "testcontainers" or "ops". */
    servicesSource: string;
    /** ops/'s security.json (secured listeners, CA and client files, SCRAM users), or "" when there is none. */
    secureServices: string;
    /** Why there are no secured listeners to test against ("" when there are). */
    secureServicesMissing: string;
  }
}

export {};
