export { startTestbed, type Testbed, type TestbedOptions } from './start-testbed.js';
export { testbedUp, testbedDown, type TestbedProcesses } from './testbed-processes.js';
