export * as cmd from './gen/cmd.js';
export * as node from './gen/node.js';
export { CMD_VERSIONS, highestCommonVersion } from './version.js';
