import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import {
  ErrorNumber, LibvirtError, RemoteProc, STRING_MAX, XdrError, XdrReader, XdrWriter, decodeDomainEvent,
  isAgentUnresponsive, isNotFound, isOperationInvalid, nameDomainState, readLibvirtError, writeDomainRef, writeTypedParam,
} from '../src/index.js';
import type { DomainRef } from '../src/index.js';
import { writeError } from './fake-daemon.js';

const dom: DomainRef = { name: 'vm1', uuid: Buffer.alloc(16, 0xab), id: 3 };
const body = (fill: (w: XdrWriter) => void): Buffer => {
  const w = new XdrWriter();
  fill(w);
  return Buffer.from(w.toBuffer());
};
const withDom = (callbackId: number, rest: (w: XdrWriter) => void) => body((w) => {
  w.int(callbackId);
  writeDomainRef(w, dom);
  rest(w);
});

describe('libvirt errors', () => {
  it('decodes remote_error with every field, including the unused dom and net pointers', () => {
    const b = body((w) => {
      w.int(42).int(10).optional('Domain not found: no domain with matching name', (x, s) => x.string(s, STRING_MAX)).int(2);
      w.optional(dom, writeDomainRef).optional('s1', (x, s) => x.string(s, 9)).bool(false).optional('s3', (x, s) => x.string(s, 9));
      w.int(7).int(-1).optional('net', (x, s) => { x.string(s, 9).opaqueFixed(Buffer.alloc(16), 16); });
    });
    const err = readLibvirtError(new XdrReader(b));
    assert.ok(err instanceof LibvirtError);
    assert.equal(err.code, ErrorNumber.NO_DOMAIN);
    assert.equal(err.code, 42);
    assert.equal(err.codeName, 'NO_DOMAIN');
    assert.equal(err.domainName, 'QEMU');
    assert.equal(err.levelName, 'ERROR');
    assert.equal(err.message, 'Domain not found: no domain with matching name');
    assert.deepEqual([err.str1, err.str2, err.str3, err.int1, err.int2], ['s1', null, 's3', 7, -1]);
    assert.equal(isNotFound(err), true);
    assert.equal(isOperationInvalid(err), false);
  });

  it('classifies codes with predicates and keeps unknown codes', () => {
    const make = (code: number): LibvirtError => readLibvirtError(new XdrReader(body((w) => writeError(w, { code, message: 'm' }))));
    assert.equal(isOperationInvalid(make(55)), true);
    assert.equal(isAgentUnresponsive(make(86)), true);
    assert.equal(isNotFound(make(55)), false);
    assert.equal(isNotFound(new Error('NO_DOMAIN')), false);
    assert.equal(make(9999).codeName, 'UNKNOWN');
    assert.equal(make(9999).code, 9999);
  });

  it('names domain states with the reason table of the state', () => {
    assert.deepEqual(nameDomainState(5, 2), { state: 'SHUTOFF', reason: 'DESTROYED', stateCode: 5, reasonCode: 2 });
    assert.deepEqual(nameDomainState(3, 1), { state: 'PAUSED', reason: 'USER', stateCode: 3, reasonCode: 1 });
    assert.equal(nameDomainState(1, 1).reason, 'BOOTED');
    assert.equal(nameDomainState(42, 0).state, 'UNKNOWN');
  });
});

describe('domain events', () => {
  it('decodes lifecycle events to named event and detail', () => {
    const ev = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, withDom(4, (w) => w.int(5).int(0)));
    assert.deepEqual(ev, { kind: 'LIFECYCLE', callbackId: 4, domain: dom, event: 'STOPPED', detail: 'SHUTDOWN', eventCode: 5, detailCode: 0 });
    const started = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, withDom(4, (w) => w.int(2).int(0)));
    assert.equal(started?.kind === 'LIFECYCLE' && `${started.event}/${started.detail}`, 'STARTED/BOOTED');
  });

  it('decodes agent lifecycle, reboot, watchdog, device and I/O error events', () => {
    const agent = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_AGENT_LIFECYCLE, withDom(1, (w) => w.int(1).int(2)));
    assert.ok(agent?.kind === 'AGENT_LIFECYCLE');
    assert.deepEqual([agent.state, agent.reason], ['CONNECTED', 'CHANNEL']);
    assert.equal(decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_REBOOT, withDom(2, () => undefined))?.kind, 'REBOOT');
    const pass = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_MIGRATION_ITERATION, withDom(8, (w) => w.int(3)));
    assert.equal(pass?.kind === 'MIGRATION_ITERATION' ? pass.iteration : undefined, 3);
    const wd = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_WATCHDOG, withDom(3, (w) => w.int(3)));
    assert.ok(wd?.kind === 'WATCHDOG' && wd.action === 'POWEROFF');
    const added = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_DEVICE_ADDED, withDom(5, (w) => w.string('virtio-disk1', 99)));
    assert.ok(added?.kind === 'DEVICE_ADDED' && added.devAlias === 'virtio-disk1');
    const removed = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_DEVICE_REMOVED, withDom(6, (w) => w.string('net0', 99)));
    assert.ok(removed?.kind === 'DEVICE_REMOVED' && removed.devAlias === 'net0');
    const io = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_IO_ERROR_REASON,
      withDom(7, (w) => w.string('/d.img', 99).string('virtio-disk0', 99).int(1).string('enospc', 99)));
    assert.ok(io?.kind === 'IO_ERROR_REASON');
    assert.deepEqual([io.srcPath, io.devAlias, io.action, io.reason], ['/d.img', 'virtio-disk0', 'PAUSE', 'enospc']);
    const io0 = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_IO_ERROR, withDom(7, (w) => w.string('/d', 9).string('a', 9).int(2)));
    assert.ok(io0?.kind === 'IO_ERROR' && io0.action === 'REPORT' && io0.reason === null);
  });

  it('decodes job-completed typed parameters', () => {
    const ev = decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_JOB_COMPLETED, withDom(8, (w) => w.array([
      { field: 'type', type: 'INT', value: 3 },
      { field: 'time_elapsed', type: 'ULLONG', value: 1234n },
    ] as const, 64, writeTypedParam)));
    assert.ok(ev?.kind === 'JOB_COMPLETED');
    assert.deepEqual(ev.stats, { type: 3, time_elapsed: 1234n });
  });

  it('returns undefined for procedures it does not decode and throws on malformed bodies', () => {
    assert.equal(decodeDomainEvent(RemoteProc.DOMAIN_GET_STATE, Buffer.alloc(0)), undefined);
    assert.throws(() => decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, withDom(1, (w) => w.int(5))), XdrError);
    assert.throws(() => decodeDomainEvent(RemoteProc.DOMAIN_EVENT_CALLBACK_REBOOT, withDom(1, (w) => w.int(5))), /trailing/);
  });
});
