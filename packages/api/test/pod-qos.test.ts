import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podQosClass } from '../src/pod-qos.js';

const both = (cpu: string, memory: string) => ({ cpu, memory });

test('podQosClass: BestEffort without cpu or memory anywhere, Burstable with any, Guaranteed when every container limits both and requests equal limits', () => {
  assert.equal(podQosClass({ containers: [{}] }), 'BestEffort');
  assert.equal(podQosClass({ containers: [{ resources: { requests: { 'devices.kubevirt.io/kvm': '1' } } }] }), 'BestEffort');
  assert.equal(podQosClass({ containers: [{ resources: { requests: { cpu: '100m' } } }] }), 'Burstable');
  assert.equal(podQosClass({ containers: [{ resources: { requests: both('1', '1Gi'), limits: both('1', '1Gi') } }] }), 'Guaranteed');
  // Quantities compare by value, and a request left out is its limit.
  assert.equal(podQosClass({ containers: [{ resources: { requests: both('1000m', '1024Mi'), limits: both('1', '1Gi') } }] }), 'Guaranteed');
  assert.equal(podQosClass({ containers: [{ resources: { limits: both('1', '1Gi') } }] }), 'Guaranteed');
  assert.equal(podQosClass({ containers: [{ resources: { requests: both('1', '1Gi'), limits: { cpu: '1' } } }] }), 'Burstable');
});

test('podQosClass: init containers count, a sidecar asking less than its limit makes the pod Burstable', () => {
  const compute = { resources: { requests: both('2', '1Gi'), limits: both('2', '1Gi') } };
  assert.equal(podQosClass({ containers: [compute], initContainers: [{ resources: { requests: both('5m', '35M'), limits: both('15m', '60M') } }] }), 'Burstable');
  assert.equal(podQosClass({ containers: [compute], initContainers: [{ resources: { requests: both('15m', '60M'), limits: both('15m', '60M') } }] }), 'Guaranteed');
  assert.equal(podQosClass({ containers: [compute], initContainers: [{ resources: { requests: { memory: '40Mi' }, limits: { memory: '40Mi' } } }] }), 'Burstable');
});
