/**
 * Route schemas compiled on their route's first request instead of at the server's start: Fastify compiles every
 * route's body, query and params schema with Ajv when the server gets ready, though a server (each test's own,
 * a `drover ui` opened for one look) may answer a few of its routes only. Each validator here compiles its schema
 * (and the Ajv instance, once per server) the first time a request needs it, and from then on calls Ajv's function.
 */

/** A compiled schema: true when the data fits; `errors` says why not (Ajv's, which Fastify reads after `false`). */
export interface Validator {
  (data: unknown): boolean | Promise<unknown>;
  errors?: unknown;
}

/**
 * Fastify's `compilersFactory.buildValidator` (@fastify/ajv-compiler's): (the shared schemas, the `ajv` server
 * option) -> a compiler of each route's schema (what Fastify hands it: the schema, the route, the part).
 */
// biome-ignore lint/suspicious/noExplicitAny: any builder of this shape, Fastify's parameter types included
export type BuildValidator = (externalSchemas: any, ajvOptions: any) => (route: any) => Validator;

/** `build` with each schema compiled on first use: a builder of the same type. */
export function lazyValidators<B extends BuildValidator>(build: B): B {
  const lazy: BuildValidator = (externalSchemas, ajvOptions) => {
    let compiler: ReturnType<BuildValidator> | undefined;
    return (route) => {
      let compiled: Validator | undefined;
      const validate: Validator = (data) => {
        if (compiled === undefined) {
          compiler ??= build(externalSchemas, ajvOptions);
          compiled = compiler(route);
        }
        const ok = compiled(data);
        validate.errors = compiled.errors;
        return ok;
      };
      return validate;
    };
  };
  return lazy as B;
}
