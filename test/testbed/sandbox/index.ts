export { PodNetwork, type PodSandbox } from './pod-network.js';
export { stackNetwork, type StackNetwork } from './stack-network.js';
export { SandboxError, type SandboxErrorCode } from './sandbox-error.js';
