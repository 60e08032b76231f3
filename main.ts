/**
 * `npm start`: the whole layer in one process; prints the GraphiQL URL; stops cleanly on SIGINT/SIGTERM
 * (a second signal exits at once).
 */
import { startStack } from './stack.ts';

const stack = await startStack();
const { gateway, config, emulatorUrl } = stack;
console.log(`openapi-supergraph ready`);
console.log(`  GraphiQL and GraphQL:  ${gateway.graphqlUrl}`);
console.log(`  WebSocket (graphql-ws): ${gateway.wsUrl}`);
console.log(`  upstream: ${config.env}${emulatorUrl ? ` (embedded emulator at ${emulatorUrl}, control API ${emulatorUrl}/_emulator/calls)` : ''}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      console.log(`\n${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    console.log(`\n${signal}: shutting down`);
    stack.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
