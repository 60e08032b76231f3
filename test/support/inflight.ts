/**
 * Waits on the emulator's count of area calls still being handled (`GET /_emulator/inflight`):
 * until one is held (a caller is in flight), or until none is (hangs and late answers have ended,
 * and are in the call log). Polls the count (the kit's `waitFor`); no sleeping in place of it.
 */
import { request } from 'undici';
import { waitFor } from './wait.ts';

export async function untilInFlight(emulatorUrl: string, until: 'some' | 'none', ms = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const { count } = (await (await request(`${emulatorUrl}/_emulator/inflight`)).body.json()) as { count: number };
      return until === 'some' ? count > 0 : count === 0;
    },
    until === 'some' ? 'a call in flight at the emulator' : 'no call in flight at the emulator',
    { deadline: ms },
  );
}
