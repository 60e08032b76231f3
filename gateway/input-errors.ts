/**
 * Gateway plugin: errors about the values a client sent get `extensions.code: BAD_USER_INPUT`,
 * whether GraphQL found them while validating the document (an inline argument or input field of
 * the wrong type, or missing) or while coercing variables. Other validation errors (an unknown
 * field, a syntax error) keep `GRAPHQL_VALIDATION_FAILED` / `GRAPHQL_PARSE_FAILED`.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, type ExecutionResult } from 'graphql';

/** Messages of graphql-js rules and coercion that are about input values. */
const INPUT_VALUE_MESSAGES = [
  /^Variable "\$[^"]+" got invalid value/,
  /^Variable "\$[^"]+" of required type "[^"]+" was not provided/,
  /^Variable "\$[^"]+" of non-null type "[^"]+" must not be null/,
  /^Field "[^"]+" of required type "[^"]+" was not provided/,
  /^Argument "[^"]+" of required type "[^"]+" is required/,
  /^Field "[^"]+" argument "[^"]+" of type "[^"]+" is required, but it was not provided/,
  /^Argument "[^"]+" of non-null type "[^"]+" must not be null/,
  /^Expected value of type "[^"]+", found/,
  /^Field "[^"]+" is not defined by type "[^"]+"/,
  /^(Int|Float|String|Boolean|ID|Enum "[^"]+") cannot represent/,
  /^Value "[^"]*" does not exist in "[^"]+" enum/,
];

const isInputValueError = (e: GraphQLError): boolean => {
  const code = e.extensions?.code;
  return (code === undefined || code === 'GRAPHQL_VALIDATION_FAILED') && INPUT_VALUE_MESSAGES.some((re) => re.test(e.message));
};

function recode(result: ExecutionResult): ExecutionResult | null {
  if (!result.errors?.some(isInputValueError)) return null;
  return {
    ...result,
    errors: result.errors.map((e) =>
      isInputValueError(e)
        ? new GraphQLError(e.message, {
            nodes: e.nodes,
            source: e.source,
            positions: e.positions,
            path: e.path,
            originalError: e.originalError,
            extensions: { ...e.extensions, code: 'BAD_USER_INPUT' },
          })
        : e,
    ),
  };
}

export function useInputErrorCodes(): GatewayPlugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const recoded = recode(result);
      if (recoded) setResult(recoded);
    },
  };
}
