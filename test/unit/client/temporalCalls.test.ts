// What a failed call to Temporal means to a caller: a server that did not answer in time is
// `temporal_unavailable` (503, retry), never an internal error (500).
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { AuthcapError } from '../../../domain/errors.js';
import { isDeadlineOrUnavailable, serverCall } from '../../../client/transport/deadlines.js';

// Only the connection's deadline wrapper is used by serverCall: the call itself is the fault.
const temporal = { connection: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() } } as unknown as Client;
const grpcError = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details });

describe('calls to Temporal that get no answer', () => {
  it.each([
    [1, 'CANCELLED: the server reset a stream past its deadline'],
    [4, 'DEADLINE_EXCEEDED'],
    [14, 'UNAVAILABLE'],
  ])('gRPC code %i is a timeout to the caller', async (code, details) => {
    expect(isDeadlineOrUnavailable(grpcError(code, details))).toBe(true);
    await expect(serverCall(temporal, () => Promise.reject(grpcError(code, details)))).rejects.toMatchObject({ code: 'temporal_unavailable' });
  });

  it('a refusal from the server keeps its own meaning', async () => {
    expect(isDeadlineOrUnavailable(grpcError(5, 'NOT_FOUND'))).toBe(false);
    const refused = await serverCall(temporal, () => Promise.reject(grpcError(3, 'INVALID_ARGUMENT: bad query'))).catch((err) => err);
    expect(refused).toBeInstanceOf(AuthcapError);
    expect(refused.code).not.toBe('temporal_unavailable');
  });
});
