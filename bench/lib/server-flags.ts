/** The Node flags of package.json's start script, as every bench starts the service. */
export { serverNodeFlags } from '../../test/processes.js';
